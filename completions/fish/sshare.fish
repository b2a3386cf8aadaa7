complete -c sshare -s A -l accounts -d 'Display the given accounts (comma separated list)' -r
complete -c sshare -s M -l cluster -l clusters -d 'Clusters to ask (slurmlet: the profile\'s cluster)' -r
complete -c sshare -s o -l format -d 'Comma separated list of fields' -r
complete -c sshare -s u -l users -d 'Display information for the given users (comma separated list; -1: all)' -r
complete -c sshare -s a -l all -d 'Display information for all users'
complete -c sshare -s e -l helpformat -d 'Print a list of fields that can be specified with the \'--format\' option'
complete -c sshare -s n -s h -l noheader -d 'Omit the header from the output'
complete -c sshare -s l -l long -d 'Include normalized usage and Fair Tree\'s level fair-share in the output'
complete -c sshare -s m -l partition -d 'Print the partition part of the association'
complete -c sshare -s p -l parsable -d '\'|\' delimited output with a trailing \'|\''
complete -c sshare -s P -l parsable2 -d '\'|\' delimited output without a trailing \'|\''
complete -c sshare -s U -l Users -d 'Display only user information'
complete -c sshare -s v -l verbose -d 'Display more information'
complete -c sshare -l help -d 'Display this help'
complete -c sshare -l usage -d 'Display a brief usage message'
complete -c sshare -s V -l version -d 'output version information and exit'
