complete -c squeue -s j -l jobs -d 'Comma separated list of jobs IDs to view' -r
complete -c squeue -s h -l noheader -d 'Do not print a header'
