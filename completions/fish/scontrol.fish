complete -c scontrol -s Q -l quiet -d 'Print no messages about errors'
complete -c scontrol -s h -l help -d 'Print help'
