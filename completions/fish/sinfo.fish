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

complete -c sinfo -s o -l format -d 'Format specification' -r
complete -c sinfo -s O -l Format -d 'Format specification by field names' -r
complete -c sinfo -s p -l partition -d 'Report on specific partition(s)' -r -f -k -a '(__slurmlet_value partitions)'
complete -c sinfo -s n -l nodes -d 'Report on specific node(s)' -r -f -k -a '(__slurmlet_value nodes)'
complete -c sinfo -s t -l states -d 'Only nodes in these states' -r
complete -c sinfo -s i -l iterate -d 'Report once (accepted)' -r
complete -c sinfo -s S -l sort -d 'Sort order (accepted)' -r
complete -c sinfo -s M -l clusters -d 'The cluster to talk to: a profile of the profiles file (see `slurmlet profiles`)' -r
complete -c sinfo -l help -d 'Print this help'
complete -c sinfo -s h -l noheader -d 'no headers on output'
complete -c sinfo -s N -l Node -d 'Node-centric format'
complete -c sinfo -s l -l long -d 'Long output'
complete -c sinfo -s s -l summarize -d 'Summarize partition information'
complete -c sinfo -s T -l reservation -d 'List reasons nodes are unavailable report reservations'
complete -c sinfo -s R -l list-reasons
complete -c sinfo -l json -d 'Produce JSON output'
complete -c sinfo -s a -l all -d 'Show all partitions (accepted)'
complete -c sinfo -s e -l exact -d 'Group only identical nodes (accepted)'
complete -c sinfo -s v -l verbose -d 'Verbosity (ignored)'
complete -c sinfo -s V -l version -d 'output version information and exit'
