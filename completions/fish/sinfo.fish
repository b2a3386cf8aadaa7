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

complete -c sinfo -s o -l format -d 'Format specification' -r
complete -c sinfo -s O -l Format -d 'Format specification by field names' -r
complete -c sinfo -s p -l partition -d 'Report on specific partition(s)' -r -f -k -a '(__slurmlet_complete partitions)'
complete -c sinfo -s n -l nodes -d 'Report on specific node(s)' -r -f -k -a '(__slurmlet_complete nodes)'
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
