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

complete -c scancel -s n -l name -d 'act only on jobs with this name' -r
complete -c scancel -s p -l partition -d 'act only on jobs in this partition' -r -f -k -a '(__slurmlet_value partitions)'
complete -c scancel -s s -l signal -d 'signal to send to job, default is SIGKILL' -r
complete -c scancel -s t -l state -d 'act only on jobs in this state.  Valid job states are PENDING, RUNNING and SUSPENDED' -r
complete -c scancel -s u -l user -d 'act only on jobs of this user' -r -f -k -a '(__slurmlet_value users)'
complete -c scancel -s M -l clusters -d 'The cluster to talk to: a profile of the profiles file (see `slurmlet profiles`)' -r
complete -c scancel -s b -l batch -d 'signal batch shell only'
complete -c scancel -s f -l full -d 'signal batch shell and all steps for specified job'
complete -c scancel -s Q -l quiet -d 'disable warnings'
complete -c scancel -l me -d 'act only on jobs of the current user'
complete -c scancel -s v -l verbose -d 'verbose operation'
complete -c scancel -s V -l version -d 'output version information and exit'
complete -c scancel -s h -l help -d 'Print help'
complete -c scancel -f -k -a '(__slurmlet_complete jobs)'
