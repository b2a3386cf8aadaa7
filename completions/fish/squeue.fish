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

complete -c squeue -s j -l jobs -d 'Comma separated list of jobs IDs to view' -r -f -k -a '(__slurmlet_value jobs)'
complete -c squeue -s u -l user -d 'Comma separated list of users to view' -r -f -k -a '(__slurmlet_value users)'
complete -c squeue -s p -l partition -d 'Comma separated list of partitions to view' -r -f -k -a '(__slurmlet_value partitions)'
complete -c squeue -s R -l reservation -d 'reservation to view' -r
complete -c squeue -s t -l states -d 'Comma separated list of states to view (default: pending and running)' -r
complete -c squeue -s n -l name -d 'Comma separated list of job names to view' -r
complete -c squeue -s o -l format -d 'Format specification' -r
complete -c squeue -s O -l Format -d 'Format specification by field names' -r
complete -c squeue -s S -l sort -d 'Comma separated list of fields to sort on' -r
complete -c squeue -s i -l iterate -d 'Accepted for compatibility; reports once' -r
complete -c squeue -s s -l steps -d 'Report job steps, only those of the comma separated list when given (JOB.STEP, ARRAY_TASK.STEP)' -r
complete -c squeue -s M -l clusters -d 'The cluster to talk to: a profile of the profiles file (see `slurmlet profiles`)' -r
complete -c squeue -l help -d 'Print this help'
complete -c squeue -s h -l noheader -d 'Do not print a header'
complete -c squeue -l me -d 'Equivalent to --user=<my username>'
complete -c squeue -s l -l long -d 'Long report'
complete -c squeue -l start -d 'Print expected start times of pending jobs'
complete -c squeue -l json -d 'Produce JSON output'
complete -c squeue -s a -l all -d 'Display jobs in hidden partitions (accepted)'
complete -c squeue -s r -l array -d 'Display one job array element per line'
complete -c squeue -l only-job-state -d 'Only report job states (accepted)'
complete -c squeue -s v -l verbose -d 'Verbosity (ignored)'
complete -c squeue -s V -l version -d 'output version information and exit'
