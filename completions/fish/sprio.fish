complete -c sprio -s j -l jobs -d 'Print the job priorities for a comma separated list of job ids (all when none)' -r
complete -c sprio -s M -l clusters -l cluster -d 'Clusters to ask (slurmlet: the profile\'s cluster)' -r
complete -c sprio -s o -l format -d 'Format specification (%.15i %9r …)' -r
complete -c sprio -s S -l sort -d 'Comma separated list of fields to sort on (i, Y, u, …; \'-\' before one: descending)' -r
complete -c sprio -s p -l partition -d 'Print the jobs of these partitions only' -r
complete -c sprio -s u -l user -l users -d 'Print the jobs of these users only' -r
complete -c sprio -s h -l noheader -d 'Do not print a header on the output'
complete -c sprio -s l -l long -d 'Long report: every factor, the user, account and QOS'
complete -c sprio -s n -l norm -d 'Print the factors normalised (0 to 1) rather than weighted'
complete -c sprio -s v -l verbose -d 'Verbose mode'
complete -c sprio -s w -l weights -d 'Print the weights of the factors'
complete -c sprio -l help -d 'Show this help message'
complete -c sprio -l usage -d 'Display a brief summary of sprio options'
complete -c sprio -l helpformat -d 'Print a list of the format letters'
complete -c sprio -l local -d 'Show only the local cluster (one machine: always)'
complete -c sprio -l federation -d 'Show jobs of the federation (one machine: the same)'
complete -c sprio -l sibling -l sib -d 'Show each sibling job (one machine: the same)'
complete -c sprio -s V -l version -d 'output version information and exit'
