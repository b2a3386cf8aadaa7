complete -c sinfo -s h -l noheader -d 'no headers on output'
