# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_slurmletd_global_optspecs
    string join \n config= socket= system listen= h/help
end

function __fish_slurmletd_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_slurmletd_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_slurmletd_using_subcommand
    set -l cmd (__fish_slurmletd_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c slurmletd -n "__fish_slurmletd_needs_command" -l config -d 'Configuration file (default: $SLURMLET_CONF or ~/.config/slurmlet/slurmlet.toml)' -r -F
complete -c slurmletd -n "__fish_slurmletd_needs_command" -l socket -d 'Socket to listen on (overrides the configuration)' -r -F
complete -c slurmletd -n "__fish_slurmletd_needs_command" -l listen -d 'Also serve the REST API to token holders on this TCP address, e.g. 127.0.0.1:6820 (overrides the configuration\'s `listen`)' -r
complete -c slurmletd -n "__fish_slurmletd_needs_command" -l system -d 'Run as the system daemon shared by every user (as root; configuration /etc/slurmlet/slurmlet.toml, state /var/lib/slurmlet, socket /run/slurmlet/slurmlet.sock)'
complete -c slurmletd -n "__fish_slurmletd_needs_command" -s h -l help -d 'Print help'
complete -c slurmletd -n "__fish_slurmletd_needs_command" -f -a "run" -d 'Run in the foreground'
complete -c slurmletd -n "__fish_slurmletd_needs_command" -f -a "start" -d 'Start in the background unless one is running'
complete -c slurmletd -n "__fish_slurmletd_needs_command" -f -a "stop" -d 'Stop the running daemon (jobs keep running and are re-adopted on the next start)'
complete -c slurmletd -n "__fish_slurmletd_needs_command" -f -a "status" -d 'Say whether a daemon answers, and where'
complete -c slurmletd -n "__fish_slurmletd_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c slurmletd -n "__fish_slurmletd_using_subcommand run" -l config -d 'Configuration file (default: $SLURMLET_CONF or ~/.config/slurmlet/slurmlet.toml)' -r -F
complete -c slurmletd -n "__fish_slurmletd_using_subcommand run" -l socket -d 'Socket to listen on (overrides the configuration)' -r -F
complete -c slurmletd -n "__fish_slurmletd_using_subcommand run" -l listen -d 'Also serve the REST API to token holders on this TCP address, e.g. 127.0.0.1:6820 (overrides the configuration\'s `listen`)' -r
complete -c slurmletd -n "__fish_slurmletd_using_subcommand run" -l system -d 'Run as the system daemon shared by every user (as root; configuration /etc/slurmlet/slurmlet.toml, state /var/lib/slurmlet, socket /run/slurmlet/slurmlet.sock)'
complete -c slurmletd -n "__fish_slurmletd_using_subcommand run" -s h -l help -d 'Print help'
complete -c slurmletd -n "__fish_slurmletd_using_subcommand start" -l config -d 'Configuration file (default: $SLURMLET_CONF or ~/.config/slurmlet/slurmlet.toml)' -r -F
complete -c slurmletd -n "__fish_slurmletd_using_subcommand start" -l socket -d 'Socket to listen on (overrides the configuration)' -r -F
complete -c slurmletd -n "__fish_slurmletd_using_subcommand start" -l listen -d 'Also serve the REST API to token holders on this TCP address, e.g. 127.0.0.1:6820 (overrides the configuration\'s `listen`)' -r
complete -c slurmletd -n "__fish_slurmletd_using_subcommand start" -l system -d 'Run as the system daemon shared by every user (as root; configuration /etc/slurmlet/slurmlet.toml, state /var/lib/slurmlet, socket /run/slurmlet/slurmlet.sock)'
complete -c slurmletd -n "__fish_slurmletd_using_subcommand start" -s h -l help -d 'Print help'
complete -c slurmletd -n "__fish_slurmletd_using_subcommand stop" -l config -d 'Configuration file (default: $SLURMLET_CONF or ~/.config/slurmlet/slurmlet.toml)' -r -F
complete -c slurmletd -n "__fish_slurmletd_using_subcommand stop" -l socket -d 'Socket to listen on (overrides the configuration)' -r -F
complete -c slurmletd -n "__fish_slurmletd_using_subcommand stop" -l listen -d 'Also serve the REST API to token holders on this TCP address, e.g. 127.0.0.1:6820 (overrides the configuration\'s `listen`)' -r
complete -c slurmletd -n "__fish_slurmletd_using_subcommand stop" -l system -d 'Run as the system daemon shared by every user (as root; configuration /etc/slurmlet/slurmlet.toml, state /var/lib/slurmlet, socket /run/slurmlet/slurmlet.sock)'
complete -c slurmletd -n "__fish_slurmletd_using_subcommand stop" -s h -l help -d 'Print help'
complete -c slurmletd -n "__fish_slurmletd_using_subcommand status" -l config -d 'Configuration file (default: $SLURMLET_CONF or ~/.config/slurmlet/slurmlet.toml)' -r -F
complete -c slurmletd -n "__fish_slurmletd_using_subcommand status" -l socket -d 'Socket to listen on (overrides the configuration)' -r -F
complete -c slurmletd -n "__fish_slurmletd_using_subcommand status" -l listen -d 'Also serve the REST API to token holders on this TCP address, e.g. 127.0.0.1:6820 (overrides the configuration\'s `listen`)' -r
complete -c slurmletd -n "__fish_slurmletd_using_subcommand status" -l system -d 'Run as the system daemon shared by every user (as root; configuration /etc/slurmlet/slurmlet.toml, state /var/lib/slurmlet, socket /run/slurmlet/slurmlet.sock)'
complete -c slurmletd -n "__fish_slurmletd_using_subcommand status" -s h -l help -d 'Print help'
complete -c slurmletd -n "__fish_slurmletd_using_subcommand help; and not __fish_seen_subcommand_from run start stop status help" -f -a "run" -d 'Run in the foreground'
complete -c slurmletd -n "__fish_slurmletd_using_subcommand help; and not __fish_seen_subcommand_from run start stop status help" -f -a "start" -d 'Start in the background unless one is running'
complete -c slurmletd -n "__fish_slurmletd_using_subcommand help; and not __fish_seen_subcommand_from run start stop status help" -f -a "stop" -d 'Stop the running daemon (jobs keep running and are re-adopted on the next start)'
complete -c slurmletd -n "__fish_slurmletd_using_subcommand help; and not __fish_seen_subcommand_from run start stop status help" -f -a "status" -d 'Say whether a daemon answers, and where'
complete -c slurmletd -n "__fish_slurmletd_using_subcommand help; and not __fish_seen_subcommand_from run start stop status help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
