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

complete -c sstat -s j -l jobs -d 'Stat this job step, or comma-separated list of job steps (<job(.step)>)' -r -f -k -a '(__slurmlet_value jobs)'
complete -c sstat -s o -l format -l fields -d 'Comma separated list of fields (use "--helpformat" for a list of available fields)' -r
complete -c sstat -s a -l allsteps -d 'Print all steps for the given job(s) when no step is specified'
complete -c sstat -s e -l helpformat -d 'Print a list of fields that can be specified with the \'--format\' option'
complete -c sstat -s h -l help -d 'Print this description of use'
complete -c sstat -s i -l pidformat -d 'Predefined format to list the pids running for each job step (JobId,Nodes,Pids)'
complete -c sstat -s n -l noheader -d 'No header will be added to the beginning of output'
complete -c sstat -l noconvert -d 'Don\'t convert units from their original type (e.g. 2048M won\'t be converted to 2G)'
complete -c sstat -s p -l parsable -d 'Output will be \'|\' delimited with a \'|\' at the end'
complete -c sstat -s P -l parsable2 -d 'Output will be \'|\' delimited without a \'|\' at the end'
complete -c sstat -l usage -d 'Display brief usage message'
complete -c sstat -s v -l verbose -d 'Report the state of various variables during processing'
complete -c sstat -s V -l version -d 'output version information and exit'
complete -c sstat -f -k -a '(__slurmlet_complete jobs)'
