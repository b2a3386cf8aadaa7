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

complete -c scontrol -l json -d '`show job|node|partition` as JSON: the v0.0.43 REST reply (only v0.0.43 is spoken)' -r
complete -c scontrol -s M -l clusters -d 'The cluster to talk to: a profile of the profiles file (see `slurmlet profiles`)' -r
complete -c scontrol -s Q -l quiet -d 'Print no messages about errors'
complete -c scontrol -s o -l oneliner -d 'Print each record of `show` on one line'
complete -c scontrol -s d -l details -d 'Print more details in `show job` (DerivedExitCode, the allocation) and `show node` (GRES in use)'
complete -c scontrol -s a -l all -d 'Show all partitions, hidden ones too (none is hidden here)'
complete -c scontrol -s v -l verbose -d 'Print more about what is done (which data_parser a cluster profile is spoken to in)'
complete -c scontrol -s V -l version -d 'output version information and exit'
complete -c scontrol -s h -l help -d 'Print help'
complete -c scontrol -f -k -a '(__slurmlet_scontrol)'
