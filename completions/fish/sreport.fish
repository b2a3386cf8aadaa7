complete -c sreport -s M -l cluster -d 'Only report on this cluster' -r
complete -c sreport -s t -d 'Time format: Seconds, Minutes, Hours, Percent, SecPer, MinPer, HourPer' -r
complete -c sreport -s T -l tres -d 'Comma separated list of TRES (cpu, mem, node, gres/gpu, ALL)' -r
complete -c sreport -s n -l noheader -d 'Omit the headers'
complete -c sreport -s p -l parsable -d '\'|\' delimited output with a trailing \'|\''
complete -c sreport -s P -l parsable2 -d '\'|\' delimited output without a trailing \'|\''
complete -c sreport -s v -l verbose -d 'Display more information'
complete -c sreport -s h -l help -d 'Display this help'
complete -c sreport -s V -l version -d 'Display the version'
