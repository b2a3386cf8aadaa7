# What the daemon offers (`slurmlet __complete ARGS… WORD`), else files.
function __slurmlet_complete
    set -l word (string replace -r -- '^--[^=]*=' '' (commandline -ct))
    set -l found
    if command -q slurmlet
        set found (slurmlet __complete $argv $word 2>/dev/null)
    end
    if set -q found[1]
        printf '%s\n' $found
    else
        __fish_complete_path $word
    end
end

# scontrol's words: what the daemon knows after hold, release, show job, update, …
function __slurmlet_scontrol
    set -l words (commandline -opc)
    __slurmlet_complete scontrol $words[2..-1]
end

complete -c scancel -s n -l name -d 'act only on jobs with this name' -r
complete -c scancel -s p -l partition -d 'act only on jobs in this partition' -r -f -k -a '(__slurmlet_complete partitions)'
complete -c scancel -s s -l signal -d 'signal to send to job, default is SIGKILL' -r
complete -c scancel -s t -l state -d 'act only on jobs in this state.  Valid job states are PENDING, RUNNING and SUSPENDED' -r
complete -c scancel -s u -l user -d 'act only on jobs of this user' -r -f -k -a '(__slurmlet_complete users)'
complete -c scancel -s M -l clusters -d 'The cluster to talk to: a profile of the profiles file (see `slurmlet profiles`)' -r
complete -c scancel -s b -l batch -d 'signal batch shell only'
complete -c scancel -s f -l full -d 'signal batch shell and all steps for specified job'
complete -c scancel -s Q -l quiet -d 'disable warnings'
complete -c scancel -l me -d 'act only on jobs of the current user'
complete -c scancel -s v -l verbose -d 'verbose operation'
complete -c scancel -s V -l version -d 'output version information and exit'
complete -c scancel -s h -l help -d 'Print help'
complete -c scancel -f -k -a '(__slurmlet_complete jobs)'
