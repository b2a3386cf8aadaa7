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

complete -c sbatch -s A -l account -d 'charge job to specified account' -r
complete -c sbatch -l acctg-freq -d 'job accounting and profiling sampling intervals' -r
complete -c sbatch -s a -l array -d 'job array index values' -r
complete -c sbatch -l batch -d 'features the batch host must have' -r
complete -c sbatch -l bb -d 'burst buffer specifications' -r
complete -c sbatch -l bbf -d 'burst buffer specification file' -r
complete -c sbatch -s b -l begin -d 'defer job until HH:MM MM/DD/YY' -r
complete -c sbatch -s D -l chdir -d 'change working directory' -r
complete -c sbatch -l cluster-constraint -d 'specify a list of cluster constraints' -r
complete -c sbatch -s M -l clusters -d 'comma separated list of clusters to issue commands to' -r
complete -c sbatch -l comment -d 'arbitrary comment' -r
complete -c sbatch -s C -l constraint -d 'specify a list of constraints' -r
complete -c sbatch -l container -d 'path to OCI container bundle' -r
complete -c sbatch -l container-id -d 'OCI container ID' -r
complete -c sbatch -s S -l core-spec -d 'count of reserved cores' -r
complete -c sbatch -l cores-per-socket -d 'number of cores per socket to allocate' -r
complete -c sbatch -l cpu-freq -d 'requested cpu frequency (and governor)' -r
complete -c sbatch -l cpus-per-gpu -d 'number of CPUs required per allocated GPU' -r
complete -c sbatch -s c -l cpus-per-task -d 'number of cpus required per task' -r
complete -c sbatch -l deadline -d 'remove the job if no ending possible before this deadline' -r
complete -c sbatch -l delay-boot -d 'delay boot for desired node features' -r
complete -c sbatch -s d -l dependency -d 'defer job until condition on jobid is satisfied' -r
complete -c sbatch -s m -l distribution -d 'distribution method for processes to nodes' -r
complete -c sbatch -s e -l error -d 'file for batch script\'s standard error' -r
complete -c sbatch -s x -l exclude -d 'exclude a specific list of hosts' -r
complete -c sbatch -l exclusive -d 'allocate nodes in exclusive mode' -r
complete -c sbatch -l export -d 'specify environment variables to export' -r
complete -c sbatch -l export-file -d 'specify environment variables file or file descriptor to export' -r
complete -c sbatch -l extra -d 'arbitrary string for node matching' -r
complete -c sbatch -s B -l extra-node-info -d 'combine request of sockets, cores and threads' -r
complete -c sbatch -l get-user-env -d 'load environment from local cluster' -r
complete -c sbatch -l gid -d 'group ID to run job as (user root only)' -r
complete -c sbatch -l gpu-bind -d 'task to gpu binding options' -r
complete -c sbatch -l gpu-freq -d 'frequency and voltage of GPUs' -r
complete -c sbatch -s G -l gpus -d 'count of GPUs required for the job' -r
complete -c sbatch -l gpus-per-node -d 'number of GPUs required per allocated node' -r
complete -c sbatch -l gpus-per-socket -d 'number of GPUs required per allocated socket' -r
complete -c sbatch -l gpus-per-task -d 'number of GPUs required per spawned task' -r
complete -c sbatch -l gres -d 'required generic resources' -r -f -k -a '(__slurmlet_value gres)'
complete -c sbatch -l gres-flags -d 'flags related to GRES management' -r
complete -c sbatch -l hint -d 'bind tasks according to application hints' -r
complete -c sbatch -s i -l input -d 'file for batch script\'s standard input' -r
complete -c sbatch -s J -l job-name -d 'name of job' -r
complete -c sbatch -l kill-on-invalid-dep -d 'kill job if dependency is invalid' -r
complete -c sbatch -s L -l licenses -d 'required license, comma separated' -r
complete -c sbatch -l mail-type -d 'notify on state change: BEGIN, END, FAIL or ALL' -r
complete -c sbatch -l mail-user -d 'who to send email notification for job state changes' -r
complete -c sbatch -l mcs-label -d 'mcs label if mcs plugin mcs/group is used' -r
complete -c sbatch -l mem -d 'minimum amount of real memory' -r
complete -c sbatch -l mem-bind -d 'bind memory to locality domains (ldom)' -r
complete -c sbatch -l mem-per-cpu -d 'maximum amount of real memory per allocated cpu required by the job' -r
complete -c sbatch -l mem-per-gpu -d 'real memory required per allocated GPU' -r
complete -c sbatch -l mem-update -d 'lower the memory limit to usage plus margin after delay' -r
complete -c sbatch -l mincpus -d 'minimum number of logical processors per node' -r
complete -c sbatch -l network -d 'specify information pertaining to the switch or network' -r
complete -c sbatch -l nice -d 'decrease scheduling priority by value' -r
complete -c sbatch -s k -l no-kill -d 'do not kill job on node failure' -r
complete -c sbatch -s F -l nodefile -d 'request a specific list of hosts' -r
complete -c sbatch -s w -l nodelist -d 'request a specific list of hosts' -r -f -k -a '(__slurmlet_value nodes)'
complete -c sbatch -s N -l nodes -d 'number of nodes on which to run (N = min[-max])' -r
complete -c sbatch -s n -l ntasks -d 'number of tasks to run' -r
complete -c sbatch -l ntasks-per-core -d 'number of tasks to invoke on each core' -r
complete -c sbatch -l ntasks-per-gpu -d 'number of tasks to invoke for each GPU' -r
complete -c sbatch -l ntasks-per-node -d 'number of tasks to invoke on each node' -r
complete -c sbatch -l ntasks-per-socket -d 'number of tasks to invoke on each socket' -r
complete -c sbatch -l oom-kill-step -d 'set the OOMKillStep behaviour' -r
complete -c sbatch -l open-mode -d 'open the output and error files using append or truncate mode' -r
complete -c sbatch -s o -l output -d 'file for batch script\'s standard output' -r
complete -c sbatch -s p -l partition -d 'partition requested' -r -f -k -a '(__slurmlet_value partitions)'
complete -c sbatch -l prefer -d 'features desired but not required by job' -r
complete -c sbatch -l priority -d 'set the priority of the job to value' -r
complete -c sbatch -l profile -d 'enable acct_gather_profile for detailed data' -r
complete -c sbatch -l propagate -d 'propagate all [or specific list of] rlimits' -r
complete -c sbatch -s q -l qos -d 'quality of service' -r
complete -c sbatch -l requeue -d 'if a job is requeued, it may be requeued' -r
complete -c sbatch -l reservation -d 'allocate resources from named reservation' -r
complete -c sbatch -l resources -d 'hierarchical resources required' -r
complete -c sbatch -l resv-ports -d 'reserve communication ports' -r
complete -c sbatch -l runtime -d 'runtime plugin to use for the job' -r
complete -c sbatch -l segment -d 'segment size for topology-aware allocation' -r
complete -c sbatch -l signal -d 'send signal when time limit within time seconds' -r
complete -c sbatch -l sockets-per-node -d 'number of sockets per node to allocate' -r
complete -c sbatch -l switches -d 'optimum switches and max time to wait for optimum' -r
complete -c sbatch -l thread-spec -d 'count of reserved threads' -r
complete -c sbatch -l threads-per-core -d 'number of threads per core to allocate' -r
complete -c sbatch -s t -l time -d 'time limit' -r
complete -c sbatch -l time-min -d 'minimum time limit (if distinct)' -r
complete -c sbatch -l tmp -d 'minimum amount of temporary disk' -r
complete -c sbatch -l tres-bind -d 'task to tres binding options' -r
complete -c sbatch -l tres-per-task -d 'list of tres required per task' -r
complete -c sbatch -l uid -d 'user ID to run job as (user root only)' -r
complete -c sbatch -l wait-all-nodes -d 'wait for all nodes to be allocated' -r
complete -c sbatch -l wckey -d 'wckey to run job under' -r
complete -c sbatch -l wrap -d 'wrap command string in a sh script and submit' -r
complete -c sbatch -l consolidate-segments -d 'consolidate all segments into one block'
complete -c sbatch -l contiguous -d 'demand a contiguous range of nodes'
complete -c sbatch -s h -l help -d 'show this help message'
complete -c sbatch -s H -l hold -d 'submit job in held state'
complete -c sbatch -l ignore-pbs -d 'ignore #PBS and #BSUB options in the batch script'
complete -c sbatch -l no-requeue -d 'if a job is requeued, do not requeue it'
complete -c sbatch -s O -l overcommit -d 'overcommit resources'
complete -c sbatch -s s -l oversubscribe -d 'over-subscribe resources with other jobs'
complete -c sbatch -l parsable -d 'outputs only the jobid and cluster name (if present), separated by semicolon, only on successful submission.'
complete -c sbatch -s Q -l quiet -d 'quiet mode (suppress informational messages)'
complete -c sbatch -l reboot -d 'reboot compute nodes before starting job'
complete -c sbatch -l spread-job -d 'spread job across as many nodes as possible'
complete -c sbatch -l spread-segments -d 'keep a base block\'s nodes in one segment'
complete -c sbatch -l stepmgr -d 'enable step management per job'
complete -c sbatch -l test-only -d 'validate the request and estimate when the job would start'
complete -c sbatch -l usage -d 'display brief usage message'
complete -c sbatch -l use-min-nodes -d 'if a range of node counts is given, prefer the smaller count'
complete -c sbatch -s v -l verbose -d 'verbose mode (multiple -v\'s increase verbosity)'
complete -c sbatch -s V -l version -d 'output version information and exit'
complete -c sbatch -s W -l wait -d 'wait for completion of submitted job'
