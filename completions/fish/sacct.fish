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

complete -c sacct -s A -l accounts -d 'Only jobs charged to these accounts' -r
complete -c sacct -s C -l constraints -d 'Only jobs that asked for these node features (slurmlet\'s node has none)' -r
complete -c sacct -l delimiter -d 'The separator of --parsable fields (default \'|\')' -r
complete -c sacct -s E -l endtime -d 'Only jobs eligible before this time (with --state: in a state before it)' -r
complete -c sacct -s f -l file -d 'Read job completion data from this file (none with slurmlet)' -r
complete -c sacct -s F -l flags -d 'Only jobs with these scheduling flags' -r
complete -c sacct -s g -l gid -d 'Only jobs of these groups' -r
complete -c sacct -s i -l nnodes -d 'Only jobs that ran on this many nodes (min[-max])' -r
complete -c sacct -s I -l ncpus -d 'Only jobs that ran on this many CPUs (min[-max])' -r
complete -c sacct -s j -l jobs -d 'Only these jobs or steps (JOB, JOB.STEP, JOB.batch, ARRAY_TASK), comma separated' -r -f -k -a '(__slurmlet_value history)'
complete -c sacct -s k -l timelimit-min -d 'Only jobs with this time limit (with --timelimit-max: at least this)' -r
complete -c sacct -s K -l timelimit-max -d 'With --timelimit-min: only jobs with a time limit up to this' -r
complete -c sacct -s M -l clusters -d 'Only jobs of these clusters' -r
complete -c sacct -s N -l nodelist -d 'Only jobs that ran on these nodes' -r -f -k -a '(__slurmlet_value nodes)'
complete -c sacct -l name -d 'Only jobs with these names' -r
complete -c sacct -l units -d 'Sizes in this unit (K, M, G, T, P)' -r
complete -c sacct -s o -l format -d 'Fields to print, comma separated, each optionally with %WIDTH (see --helpformat)' -r
complete -c sacct -s q -l qos -d 'Only jobs of these QOS' -r
complete -c sacct -s r -l partition -d 'Only jobs of these partitions' -r -f -k -a '(__slurmlet_value partitions)'
complete -c sacct -s R -l reason -d 'Only jobs that waited for these reasons' -r
complete -c sacct -s s -l state -d 'Only jobs in these states during the time window (long or short names)' -r
complete -c sacct -s S -l starttime -d 'Only jobs eligible after this time (default: midnight; with --state: now)' -r
complete -c sacct -s u -l user -d 'Only jobs of these users (names or uids; -1: everybody)' -r -f -k -a '(__slurmlet_value users)'
complete -c sacct -s W -l wckeys -d 'Only jobs with these wckeys' -r
complete -c sacct -l whole-hetjob -d 'All components of heterogeneous jobs (yes|no; slurmlet has none)' -r
complete -c sacct -s x -l associations -d 'Only jobs of these association ids' -r
complete -c sacct -l json -d 'JSON output (data_parser v0.0.43)' -r
complete -c sacct -l yaml -d 'YAML output' -r
complete -c sacct -s a -l allusers -d 'Display jobs for all users (by default only yours, unless you are root)'
complete -c sacct -s X -l allocations -d 'Only the jobs\' allocations, not their steps'
complete -c sacct -l array -d 'Expand job arrays (each task is its own record here: always one line per task)'
complete -c sacct -s b -l brief -d 'Equivalent to --format=jobid,state,exitcode'
complete -c sacct -s B -l batch-script -d 'Print the batch script of jobs (not kept by slurmlet\'s accounting)'
complete -c sacct -s c -l completion -d 'Use job completion data instead of accounting data (none with slurmlet)'
complete -c sacct -s D -l duplicates -d 'Show every record of a job id: the earlier runs of requeued jobs too'
complete -c sacct -l federation -d 'Report jobs of the federation (slurmlet has one cluster)'
complete -c sacct -s e -l helpformat -d 'Print the fields --format takes'
complete -c sacct -l helpreason -d 'Print the job reasons --reason takes'
complete -c sacct -l helpstate -d 'Print the job states --state takes'
complete -c sacct -l env-vars -d 'Print the environment of jobs (not kept by slurmlet\'s accounting)'
complete -c sacct -l expand-patterns -d 'Fill in the patterns of StdOut, StdErr and StdIn'
complete -c sacct -s h -l help -d 'Print this help'
complete -c sacct -l local -d 'Report only jobs of the local cluster'
complete -c sacct -s l -l long -d 'Many fields (mutually exclusive with --format)'
complete -c sacct -s L -l allclusters -d 'Jobs of all clusters (slurmlet has one)'
complete -c sacct -l noconvert -d 'Sizes in their own unit (2048M stays 2048M)'
complete -c sacct -s n -l noheader -d 'No header'
complete -c sacct -s p -l parsable -d 'Fields separated by \'|\', one at the end too'
complete -c sacct -s P -l parsable2 -d 'Fields separated by \'|\''
complete -c sacct -s T -l truncate -d 'Cut start and end times to the time window'
complete -c sacct -l use-local-uid -d 'Print user ids as this machine knows them'
complete -c sacct -s U -l usage -d 'Print a brief usage message'
complete -c sacct -s v -l verbose -d 'More messages'
complete -c sacct -s V -l version -d 'Print the version'
