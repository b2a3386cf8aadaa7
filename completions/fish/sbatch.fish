complete -c sbatch -s J -l job-name -d 'Name of the job' -r
complete -c sbatch -s o -l output -d 'File for batch script\'s standard output' -r
complete -c sbatch -s e -l error -d 'File for batch script\'s standard error' -r
complete -c sbatch -s i -l input -d 'File for batch script\'s standard input' -r
complete -c sbatch -s p -l partition -d 'Partition requested' -r
complete -c sbatch -s t -l time -d 'Time limit' -r
complete -c sbatch -s N -l nodes -d 'Number of nodes on which to run (N = min[-max])' -r
complete -c sbatch -s n -l ntasks -d 'Number of tasks to run' -r
complete -c sbatch -s c -l cpus-per-task -d 'Number of cpus required per task' -r
complete -c sbatch -l ntasks-per-node -d 'Number of tasks to invoke on each node' -r
complete -c sbatch -s D -l chdir -d 'Change working directory' -r
complete -c sbatch -s w -l nodelist -d 'Request a specific list of hosts' -r
complete -c sbatch -s x -l exclude -d 'Exclude a specific list of hosts' -r
complete -c sbatch -l mem -d 'Minimum amount of real memory' -r
complete -c sbatch -l mem-per-cpu -d 'Maximum amount of real memory per allocated cpu required by the job' -r
complete -c sbatch -l gres -d 'Required generic resources' -r
complete -c sbatch -s G -l gpus -d 'Number of GPUs required by the job' -r
complete -c sbatch -l gpus-per-node -d 'Number of GPUs required per allocated node' -r
complete -c sbatch -l comment -d 'Arbitrary comment' -r
complete -c sbatch -l export -d 'Specify environment variables to export' -r
complete -c sbatch -l open-mode -d 'Open the output and error files using append or truncate mode' -r
complete -c sbatch -l signal -d 'Send signal when time limit within time seconds' -r
complete -c sbatch -l wckey -d 'wckey to run job under' -r
complete -c sbatch -s b -l begin -d 'Defer job until HH:MM MM/DD/YY' -r
complete -c sbatch -s A -l account -d 'Charge job to specified account' -r
complete -c sbatch -s q -l qos -d 'Quality of service' -r
complete -c sbatch -s C -l constraint -d 'Specify a list of constraints' -r
complete -c sbatch -l mail-type -d 'Notify on state change: BEGIN, END, FAIL or ALL' -r
complete -c sbatch -l mail-user -d 'Who to send email notification for job state changes' -r
complete -c sbatch -l exclusive -d 'Allocate nodes in exclusive mode when cpu consumable resource is enabled' -r
complete -c sbatch -l nice -d 'Decrease scheduling priority by value' -r
complete -c sbatch -s d -l dependency -d 'Defer job start until condition on jobid is satisfied' -r
complete -c sbatch -s a -l array -d 'Job array index values' -r
complete -c sbatch -l wrap -d 'Wrap command string in a sh script and submit' -r
complete -c sbatch -s H -l hold -d 'Submit job in held state'
complete -c sbatch -l requeue -d 'If a job is requeued, it may be requeued'
complete -c sbatch -l no-requeue -d 'If a job is requeued, do not requeue it'
complete -c sbatch -l parsable -d 'Outputs only the job id number and the cluster name if present'
complete -c sbatch -l test-only -d 'Validate the batch script and return an estimate of when the job would be scheduled'
complete -c sbatch -s W -l wait -d 'Wait for job completion before exiting'
complete -c sbatch -s Q -l quiet -d 'Quiet mode (suppress informational messages)'
complete -c sbatch -s v -l verbose -d 'Verbose mode (multiple -v\'s increase verbosity)'
complete -c sbatch -s V -l version -d 'Print version information and exit'
complete -c sbatch -s h -l help -d 'Print help'
