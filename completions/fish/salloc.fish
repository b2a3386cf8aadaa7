# What the daemon offers (`slurmlet __complete ARGS… WORD`, WORD last), else files.
function __slurmlet_offer
    set -l found
    if command -q slurmlet
        set found (slurmlet __complete $argv 2>/dev/null)
    end
    if set -q found[1]
        printf '%s\n' $found
    else
        __fish_complete_path $argv[-1]
    end
end

# An operand's values (`scancel <TAB>`): the word under the cursor as it is.
function __slurmlet_complete
    __slurmlet_offer $argv (commandline -ct)
end

# An option's value: the word less the option before it, `--partition=` or a short option
# with its value attached (`-pgpu`, as getopt reads it); fish puts the option back in front.
function __slurmlet_value
    __slurmlet_offer $argv (string replace -r -- '^(--[^=]*=|-[^-])' '' (commandline -ct))
end

# scontrol's words: what the daemon knows after hold, release, show job, update, …
function __slurmlet_scontrol
    set -l words (commandline -opc)
    __slurmlet_complete scontrol $words[2..-1]
end

complete -c salloc -s A -l account -d 'charge job to specified account' -r
complete -c salloc -l acctg-freq -d 'job accounting and profiling sampling intervals' -r
complete -c salloc -l bb -d 'burst buffer specifications' -r
complete -c salloc -l bbf -d 'burst buffer specification file' -r
complete -c salloc -l begin -d 'defer job until HH:MM MM/DD/YY' -r
complete -c salloc -s D -l chdir -d 'change working directory' -r
complete -c salloc -l cluster-constraint -d 'specify a list of cluster constraints' -r
complete -c salloc -s M -l clusters -d 'comma separated list of clusters to issue commands to' -r
complete -c salloc -l comment -d 'arbitrary comment' -r
complete -c salloc -s C -l constraint -d 'specify a list of constraints' -r
complete -c salloc -l container -d 'path to OCI container bundle' -r
complete -c salloc -l container-id -d 'OCI container ID' -r
complete -c salloc -s S -l core-spec -d 'count of reserved cores' -r
complete -c salloc -l cores-per-socket -d 'number of cores per socket to allocate' -r
complete -c salloc -l cpu-freq -d 'requested cpu frequency (and governor)' -r
complete -c salloc -l cpus-per-gpu -d 'number of CPUs required per allocated GPU' -r
complete -c salloc -s c -l cpus-per-task -d 'number of cpus required per task' -r
complete -c salloc -l deadline -d 'remove the job if no ending possible before this deadline' -r
complete -c salloc -l delay-boot -d 'delay boot for desired node features' -r
complete -c salloc -s d -l dependency -d 'defer job until condition on jobid is satisfied' -r
complete -c salloc -s m -l distribution -d 'distribution method for processes to nodes' -r
complete -c salloc -s x -l exclude -d 'exclude a specific list of hosts' -r
complete -c salloc -l exclusive -d 'allocate nodes in exclusive mode' -r
complete -c salloc -l extra -d 'arbitrary string for node matching' -r
complete -c salloc -s B -l extra-node-info -d 'combine request of sockets, cores and threads' -r
complete -c salloc -l gpu-bind -d 'task to gpu binding options' -r
complete -c salloc -l gpu-freq -d 'frequency and voltage of GPUs' -r
complete -c salloc -s G -l gpus -d 'count of GPUs required for the job' -r
complete -c salloc -l gpus-per-node -d 'number of GPUs required per allocated node' -r
complete -c salloc -l gpus-per-socket -d 'number of GPUs required per allocated socket' -r
complete -c salloc -l gpus-per-task -d 'number of GPUs required per spawned task' -r
complete -c salloc -l gres -d 'required generic resources' -r -f -k -a '(__slurmlet_value gres)'
complete -c salloc -l gres-flags -d 'flags related to GRES management' -r
complete -c salloc -l hint -d 'bind tasks according to application hints' -r
complete -c salloc -s I -l immediate -d 'exit if resources not available in "secs"' -r
complete -c salloc -s J -l job-name -d 'name of job' -r
complete -c salloc -s K -l kill-command -d 'signal to send terminating job' -r
complete -c salloc -s L -l licenses -d 'required license, comma separated' -r
complete -c salloc -l mail-type -d 'notify on state change: BEGIN, END, FAIL or ALL' -r
complete -c salloc -l mail-user -d 'who to send email notification for job state changes' -r
complete -c salloc -l mcs-label -d 'mcs label if mcs plugin mcs/group is used' -r
complete -c salloc -l mem -d 'minimum amount of real memory' -r
complete -c salloc -l mem-bind -d 'bind memory to locality domains (ldom)' -r
complete -c salloc -l mem-per-cpu -d 'maximum amount of real memory per allocated cpu required by the job' -r
complete -c salloc -l mem-per-gpu -d 'real memory required per allocated GPU' -r
complete -c salloc -l mem-update -d 'lower the memory limit to usage plus margin after delay' -r
complete -c salloc -l mincpus -d 'minimum number of logical processors per node' -r
complete -c salloc -l network -d 'specify information pertaining to the switch or network' -r
complete -c salloc -l nice -d 'decrease scheduling priority by value' -r
complete -c salloc -s k -l no-kill -d 'do not kill job on node failure' -r
complete -c salloc -s F -l nodefile -d 'request a specific list of hosts' -r
complete -c salloc -s w -l nodelist -d 'request a specific list of hosts' -r -f -k -a '(__slurmlet_value nodes)'
complete -c salloc -s N -l nodes -d 'number of nodes on which to run (N = min[-max])' -r
complete -c salloc -s n -l ntasks -d 'number of tasks to run' -r
complete -c salloc -l ntasks-per-core -d 'number of tasks to invoke on each core' -r
complete -c salloc -l ntasks-per-gpu -d 'number of tasks to invoke for each GPU' -r
complete -c salloc -l ntasks-per-node -d 'number of tasks to invoke on each node' -r
complete -c salloc -l ntasks-per-socket -d 'number of tasks to invoke on each socket' -r
complete -c salloc -l oom-kill-step -d 'set the OOMKillStep behaviour' -r
complete -c salloc -s p -l partition -d 'partition requested' -r -f -k -a '(__slurmlet_value partitions)'
complete -c salloc -l prefer -d 'features desired but not required by job' -r
complete -c salloc -l priority -d 'set the priority of the job to value' -r
complete -c salloc -l profile -d 'enable acct_gather_profile for detailed data' -r
complete -c salloc -s q -l qos -d 'quality of service' -r
complete -c salloc -l reservation -d 'allocate resources from named reservation' -r
complete -c salloc -l resources -d 'hierarchical resources required' -r
complete -c salloc -l resv-ports -d 'reserve communication ports' -r
complete -c salloc -l runtime -d 'runtime plugin to use for the job' -r
complete -c salloc -l segment -d 'segment size for topology-aware allocation' -r
complete -c salloc -l signal -d 'send signal when time limit within time seconds' -r
complete -c salloc -l sockets-per-node -d 'number of sockets per node to allocate' -r
complete -c salloc -l switches -d 'optimum switches and max time to wait for optimum' -r
complete -c salloc -l thread-spec -d 'count of reserved threads' -r
complete -c salloc -l threads-per-core -d 'number of threads per core to allocate' -r
complete -c salloc -s t -l time -d 'time limit' -r
complete -c salloc -l time-min -d 'minimum time limit (if distinct)' -r
complete -c salloc -l tmp -d 'minimum amount of temporary disk' -r
complete -c salloc -l tres-bind -d 'task to tres binding options' -r
complete -c salloc -l tres-per-task -d 'list of tres required per task' -r
complete -c salloc -l wait-all-nodes -d 'wait for all nodes to be allocated' -r
complete -c salloc -l wckey -d 'wckey to run job under' -r
complete -c salloc -l x11 -d 'forward X11 connections' -r
complete -c salloc -l bell -d 'ring the terminal bell when the job is allocated'
complete -c salloc -l consolidate-segments -d 'consolidate all segments into one block'
complete -c salloc -l contiguous -d 'demand a contiguous range of nodes'
complete -c salloc -s h -l help -d 'show this help message'
complete -c salloc -s H -l hold -d 'submit job in held state'
complete -c salloc -l no-bell -d 'do NOT ring the terminal bell'
complete -c salloc -l no-shell -d 'immediately exit after allocating resources, without running a command'
complete -c salloc -s O -l overcommit -d 'overcommit resources'
complete -c salloc -s s -l oversubscribe -d 'over-subscribe resources with other jobs'
complete -c salloc -s Q -l quiet -d 'quiet mode (suppress informational messages)'
complete -c salloc -l reboot -d 'reboot compute nodes before starting job'
complete -c salloc -l spread-job -d 'spread job across as many nodes as possible'
complete -c salloc -l spread-segments -d 'keep a base block\'s nodes in one segment'
complete -c salloc -l stepmgr -d 'enable step management per job'
complete -c salloc -l usage -d 'display brief usage message'
complete -c salloc -l use-min-nodes -d 'if a range of node counts is given, prefer the smaller count'
complete -c salloc -s v -l verbose -d 'verbose mode (multiple -v\'s increase verbosity)'
complete -c salloc -s V -l version -d 'output version information and exit'
