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

complete -c srun -s A -l account -d 'charge job to specified account' -r
complete -c srun -l acctg-freq -d 'job accounting and profiling sampling intervals' -r
complete -c srun -l bb -d 'burst buffer specifications' -r
complete -c srun -l bbf -d 'burst buffer specification file' -r
complete -c srun -l bcast -d 'copy executable file to compute nodes' -r
complete -c srun -l bcast-exclude -d 'shared object directories not to copy with --bcast' -r
complete -c srun -s b -l begin -d 'defer job until HH:MM MM/DD/YY' -r
complete -c srun -s D -l chdir -d 'change working directory' -r
complete -c srun -l cluster-constraint -d 'specify a list of cluster constraints' -r
complete -c srun -s M -l clusters -d 'comma separated list of clusters to issue commands to' -r
complete -c srun -l comment -d 'arbitrary comment' -r
complete -c srun -l compress -d 'data compression library used with --bcast' -r
complete -c srun -s C -l constraint -d 'specify a list of constraints' -r
complete -c srun -l container -d 'path to OCI container bundle' -r
complete -c srun -l container-id -d 'OCI container ID' -r
complete -c srun -s S -l core-spec -d 'count of reserved cores' -r
complete -c srun -l cores-per-socket -d 'number of cores per socket to allocate' -r
complete -c srun -l cpu-bind -d 'bind tasks to CPUs' -r
complete -c srun -l cpu-freq -d 'requested cpu frequency (and governor)' -r
complete -c srun -l cpus-per-gpu -d 'number of CPUs required per allocated GPU' -r
complete -c srun -s c -l cpus-per-task -d 'number of cpus required per task' -r
complete -c srun -l deadline -d 'remove the job if no ending possible before this deadline' -r
complete -c srun -l delay-boot -d 'delay boot for desired node features' -r
complete -c srun -s d -l dependency -d 'defer job until condition on jobid is satisfied' -r
complete -c srun -s m -l distribution -d 'distribution method for processes to nodes' -r
complete -c srun -l epilog -d 'run "program" after launching job step' -r
complete -c srun -s e -l error -d 'file for batch script\'s standard error' -r
complete -c srun -s x -l exclude -d 'exclude a specific list of hosts' -r
complete -c srun -l exclusive -d 'allocate nodes in exclusive mode' -r
complete -c srun -l export -d 'specify environment variables to export' -r
complete -c srun -l extra -d 'arbitrary string for node matching' -r
complete -c srun -s B -l extra-node-info -d 'combine request of sockets, cores and threads' -r
complete -c srun -l gpu-bind -d 'task to gpu binding options' -r
complete -c srun -l gpu-freq -d 'frequency and voltage of GPUs' -r
complete -c srun -s G -l gpus -d 'count of GPUs required for the job' -r
complete -c srun -l gpus-per-node -d 'number of GPUs required per allocated node' -r
complete -c srun -l gpus-per-socket -d 'number of GPUs required per allocated socket' -r
complete -c srun -l gpus-per-task -d 'number of GPUs required per spawned task' -r
complete -c srun -l gres -d 'required generic resources' -r -f -k -a '(__slurmlet_value gres)'
complete -c srun -l gres-flags -d 'flags related to GRES management' -r
complete -c srun -l het-group -d 'hetjob component allocation(s) in which to launch application' -r
complete -c srun -l hint -d 'bind tasks according to application hints' -r
complete -c srun -l ignore-signals -d 'signals srun does not pass to the tasks' -r
complete -c srun -s I -l immediate -d 'exit if resources not available in "secs"' -r
complete -c srun -s i -l input -d 'file for batch script\'s standard input' -r
complete -c srun -s J -l job-name -d 'name of job' -r
complete -c srun -l jobid -d 'run under already allocated job' -r -f -k -a '(__slurmlet_value jobs)'
complete -c srun -s K -l kill-on-bad-exit -d 'kill the job if any task terminates with a non-zero exit code' -r
complete -c srun -s L -l licenses -d 'required license, comma separated' -r
complete -c srun -l mail-type -d 'notify on state change: BEGIN, END, FAIL or ALL' -r
complete -c srun -l mail-user -d 'who to send email notification for job state changes' -r
complete -c srun -l mcs-label -d 'mcs label if mcs plugin mcs/group is used' -r
complete -c srun -l mem -d 'minimum amount of real memory' -r
complete -c srun -l mem-bind -d 'bind memory to locality domains (ldom)' -r
complete -c srun -l mem-per-cpu -d 'maximum amount of real memory per allocated cpu required by the job' -r
complete -c srun -l mem-per-gpu -d 'real memory required per allocated GPU' -r
complete -c srun -l mem-update -d 'lower the memory limit to usage plus margin after delay' -r
complete -c srun -l mincpus -d 'minimum number of logical processors per node' -r
complete -c srun -l mpi -d 'type of MPI being used' -r
complete -c srun -l msg-timeout -d 'message timeout' -r
complete -c srun -l network -d 'specify information pertaining to the switch or network' -r
complete -c srun -l nice -d 'decrease scheduling priority by value' -r
complete -c srun -s k -l no-kill -d 'do not kill job on node failure' -r
complete -c srun -s F -l nodefile -d 'request a specific list of hosts' -r
complete -c srun -s w -l nodelist -d 'request a specific list of hosts' -r -f -k -a '(__slurmlet_value nodes)'
complete -c srun -s N -l nodes -d 'number of nodes on which to run (N = min[-max])' -r
complete -c srun -s n -l ntasks -d 'number of tasks to run' -r
complete -c srun -l ntasks-per-core -d 'number of tasks to invoke on each core' -r
complete -c srun -l ntasks-per-gpu -d 'number of tasks to invoke for each GPU' -r
complete -c srun -l ntasks-per-node -d 'number of tasks to invoke on each node' -r
complete -c srun -l ntasks-per-socket -d 'number of tasks to invoke on each socket' -r
complete -c srun -l oom-kill-step -d 'set the OOMKillStep behaviour' -r
complete -c srun -l open-mode -d 'open the output and error files using append or truncate mode' -r
complete -c srun -s o -l output -d 'file for batch script\'s standard output' -r
complete -c srun -s p -l partition -d 'partition requested' -r -f -k -a '(__slurmlet_value partitions)'
complete -c srun -l prefer -d 'features desired but not required by job' -r
complete -c srun -l priority -d 'set the priority of the job to value' -r
complete -c srun -l profile -d 'enable acct_gather_profile for detailed data' -r
complete -c srun -l prolog -d 'run "program" before launching job step' -r
complete -c srun -l propagate -d 'propagate all [or specific list of] rlimits' -r
complete -c srun -l pty -d 'run task zero in pseudo terminal' -r
complete -c srun -s q -l qos -d 'quality of service' -r
complete -c srun -s r -l relative -d 'run job step relative to node n of allocation' -r
complete -c srun -l reservation -d 'allocate resources from named reservation' -r
complete -c srun -l resources -d 'hierarchical resources required' -r
complete -c srun -l resv-ports -d 'reserve communication ports' -r
complete -c srun -l runtime -d 'runtime plugin to use for the job' -r
complete -c srun -l segment -d 'segment size for topology-aware allocation' -r
complete -c srun -l send-libs -d 'broadcast the executable\'s shared objects with --bcast' -r
complete -c srun -l signal -d 'send signal when time limit within time seconds' -r
complete -c srun -l slurmd-debug -d 'slurmd debug level' -r
complete -c srun -l sockets-per-node -d 'number of sockets per node to allocate' -r
complete -c srun -l switches -d 'optimum switches and max time to wait for optimum' -r
complete -c srun -l task-epilog -d 'run "program" after launching task' -r
complete -c srun -l task-prolog -d 'run "program" before launching task' -r
complete -c srun -l thread-spec -d 'count of reserved threads' -r
complete -c srun -s T -l threads -d 'set srun launch fanout' -r
complete -c srun -l threads-per-core -d 'number of threads per core to allocate' -r
complete -c srun -s t -l time -d 'time limit' -r
complete -c srun -l time-min -d 'minimum time limit (if distinct)' -r
complete -c srun -l tmp -d 'minimum amount of temporary disk' -r
complete -c srun -l treewidth -d 'fanout of the message tree' -r
complete -c srun -l tres-bind -d 'task to tres binding options' -r
complete -c srun -l tres-per-task -d 'list of tres required per task' -r
complete -c srun -s W -l wait -d 'seconds to wait after first task exits before killing job' -r
complete -c srun -l wckey -d 'wckey to run job under' -r
complete -c srun -l x11 -d 'forward X11 connections' -r
complete -c srun -l async -d 'run the step asynchronously'
complete -c srun -l consolidate-segments -d 'consolidate all segments into one block'
complete -c srun -l contiguous -d 'demand a contiguous range of nodes'
complete -c srun -s X -l disable-status -d 'Disable Ctrl-C status feature'
complete -c srun -l exact -d 'use only the resources requested for the step'
complete -c srun -l external-launcher -d 'create an external launcher step'
complete -c srun -s h -l help -d 'show this help message'
complete -c srun -s H -l hold -d 'submit job in held state'
complete -c srun -s l -l label -d 'prepend task number to lines of stdout/err'
complete -c srun -l multi-prog -d 'if set the program name specified is the configuration specification for multiple programs'
complete -c srun -s Z -l no-allocate -d 'don\'t allocate nodes (must supply -w)'
complete -c srun -s O -l overcommit -d 'overcommit resources'
complete -c srun -l overlap -d 'allow the step to share all resources with other steps'
complete -c srun -s s -l oversubscribe -d 'over-subscribe resources with other jobs'
complete -c srun -l parsable -d 'outputs only the jobid and cluster name (if present), separated by semicolon, only on successful submission.'
complete -c srun -s E -l preserve-env -d 'env vars for node and task counts override command-line flags'
complete -c srun -s Q -l quiet -d 'quiet mode (suppress informational messages)'
complete -c srun -l quit-on-interrupt -d 'quit on single Ctrl-C'
complete -c srun -l reboot -d 'reboot compute nodes before starting job'
complete -c srun -l spread-job -d 'spread job across as many nodes as possible'
complete -c srun -l spread-segments -d 'keep a base block\'s nodes in one segment'
complete -c srun -l stepmgr -d 'enable step management per job'
complete -c srun -l test-only -d 'validate the request and estimate when the job would start'
complete -c srun -s u -l unbuffered -d 'do not line-buffer stdout/err'
complete -c srun -l usage -d 'display brief usage message'
complete -c srun -l use-min-nodes -d 'if a range of node counts is given, prefer the smaller count'
complete -c srun -s v -l verbose -d 'verbose mode (multiple -v\'s increase verbosity)'
complete -c srun -s V -l version -d 'output version information and exit'
complete -c srun -l wait-for-children -d 'wait for all processes in each task to end'
