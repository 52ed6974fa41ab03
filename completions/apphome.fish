# fish completion for apphome(1): verbs, their options, and the bundle ids of installed
# apps. Installed as /usr/share/fish/vendor_completions.d/apphome.fish. The verbs and
# options are the list AppHomeCommand.reference holds; a test checks that they agree.

# The installed apps' bundle ids: `apphome list` prints a header line, then one app a
# line, its bundle id first (with the command line's --root DIR).
function __apphome_installed_ids
    set -l words (commandline -opc)
    set -l root
    set -l i (contains -i -- --root $words)
    and set root --root $words[(math $i + 1)]
    $words[1] $root list 2>/dev/null | awk 'NR > 1 && NF { print $1 }'
end

# Whether the verb has no operand yet.
function __apphome_first_operand
    set -l words (commandline -opc)
    set -l n 0
    set -l skip 1
    for word in $words[2..-1]
        if test $skip -eq 1
            switch $word
                case --root
                    set skip 2
                case '-*'
                case '*'
                    set skip 0
            end
            continue
        else if test $skip -eq 2
            set skip 1
            continue
        end
        string match -q -- '-*' $word; or set n (math $n + 1)
    end
    test $n -eq 0
end

set -l verbs install update uninstall list info container get_app_container run launch doctor purge-caches clean-tmp backup restore backups prune-backups keygen sign verify sync settings help
complete -c apphome -f
complete -c apphome -n "not __fish_seen_subcommand_from $verbs" -a "$verbs"
complete -c apphome -n "__fish_seen_subcommand_from help" -a "$verbs"
complete -c apphome -n "not __fish_seen_subcommand_from $verbs" -l root -r -a '(__fish_complete_directories)' -d 'the AppHome root'
complete -c apphome -n "not __fish_seen_subcommand_from $verbs" -l help -s h -d 'print the help'
complete -c apphome -n "not __fish_seen_subcommand_from $verbs" -l version -d 'print the version'
complete -c apphome -n "__fish_seen_subcommand_from uninstall info container get_app_container run launch backup backups prune-backups; and __apphome_first_operand" -a '(__apphome_installed_ids)'
complete -c apphome -n "__fish_seen_subcommand_from install update sign verify keygen restore" -F
complete -c apphome -n "__fish_seen_subcommand_from uninstall doctor prune-backups" -l dry-run -d 'change nothing'
complete -c apphome -n "__fish_seen_subcommand_from list" -l json -d 'print JSON'
complete -c apphome -n "__fish_seen_subcommand_from list" -l running -d 'the apps running now'
complete -c apphome -n "__fish_seen_subcommand_from run launch" -l no-sandbox -d 'run without the sandbox'
complete -c apphome -n "__fish_seen_subcommand_from run launch" -l no-network -d 'cut the network'
complete -c apphome -n "__fish_seen_subcommand_from run launch" -l talk-name -x -d 'a session-bus name the app may talk to'
complete -c apphome -n "__fish_seen_subcommand_from purge-caches" -l target-free -x -d 'SIZE to free (500M, 2G)'
complete -c apphome -n "__fish_seen_subcommand_from backup" -l all -d 'every installed app'
complete -c apphome -n "__fish_seen_subcommand_from backup" -l to -r -a '(__fish_complete_directories)'
complete -c apphome -n "__fish_seen_subcommand_from restore backups prune-backups" -l from -r -a '(__fish_complete_directories)'
complete -c apphome -n "__fish_seen_subcommand_from restore" -l app -r -F
complete -c apphome -n "__fish_seen_subcommand_from backup restore" -l password -d 'ask on the terminal'
complete -c apphome -n "__fish_seen_subcommand_from backup restore" -l password-stdin -d 'one line of standard input'
complete -c apphome -n "__fish_seen_subcommand_from backups" -l verify -d 'check every stored file'
complete -c apphome -n "__fish_seen_subcommand_from prune-backups" -l keep -x -d 'backups to keep per app'
complete -c apphome -n "__fish_seen_subcommand_from sign" -l key -r -F
complete -c apphome -n "__fish_seen_subcommand_from uninstall" -l forget-synced -d 'remove its synced store on every machine'
complete -c apphome -n "__fish_seen_subcommand_from update restore" -l allow-downgrade -d 'take an older version'
complete -c apphome -n "__fish_seen_subcommand_from backup" -l init -d 'create the restic repository'
complete -c apphome -n "__fish_seen_subcommand_from restore" -l snapshot -x -d 'a restic snapshot id'
complete -c apphome -n "__fish_seen_subcommand_from restore" -l accept-unsettled -d 'exit 0 though some files are not whole'
complete -c apphome -n "__fish_seen_subcommand_from backups" -l read-data-subset -x -d 'restic check: read this part (n/t)'
complete -c apphome -n "__fish_seen_subcommand_from sync; and __apphome_first_operand" -a 'setup status now'
complete -c apphome -n "__fish_seen_subcommand_from settings" -l listen -x -d 'loopback address and port (127.0.0.1:PORT)'
complete -c apphome -n "__fish_seen_subcommand_from settings" -l socket -r -F -d 'a Unix socket for a reverse proxy'
