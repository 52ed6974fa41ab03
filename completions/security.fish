# fish completion for AppHome's security(1): verbs, their options, keychains, and the
# bundle ids of installed apps after --app. Installed as
# /usr/share/fish/vendor_completions.d/security.fish. The verbs and options are the list
# SecurityCommand.reference holds; a test checks that they agree.

function __apphome_security_app_ids
    set -l words (commandline -opc)
    set -l apphome apphome
    string match -q -- '*/*' $words[1]; and set apphome (dirname $words[1])/apphome
    set -l root
    set -l i (contains -i -- --root $words)
    and set root --root $words[(math $i + 1)]
    $apphome $root list 2>/dev/null | awk 'NR > 1 && NF { print $1 }'
end

set -l verbs add-generic-password find-generic-password delete-generic-password add-internet-password find-internet-password delete-internet-password dump-keychain create-keychain lock-keychain unlock-keychain show-keychain-info list-keychains default-keychain login-keychain add-credential list-credentials delete-credential error help
set -l generic add-generic-password find-generic-password delete-generic-password
set -l internet add-internet-password find-internet-password delete-internet-password
set -l adds add-generic-password add-internet-password
set -l finds find-generic-password find-internet-password
set -l lists list-keychains default-keychain login-keychain
complete -c security -f
complete -c security -n "not __fish_seen_subcommand_from $verbs" -a "$verbs"
complete -c security -n "__fish_seen_subcommand_from help" -a "$verbs"
complete -c security -n "not __fish_seen_subcommand_from $verbs" -l root -r -a '(__fish_complete_directories)' -d 'the AppHome root'
complete -c security -l app -x -a '(__apphome_security_app_ids)' -d 'the app whose keychain'
complete -c security -n "not __fish_seen_subcommand_from $verbs" -l access-group -x -d 'one access group'
complete -c security -l help -s h -d 'print the help'
complete -c security -n "not __fish_seen_subcommand_from $verbs" -l version -d 'print the version'
# A keychain after the options, as on macOS.
complete -c security -n "__fish_seen_subcommand_from $generic $internet dump-keychain lock-keychain unlock-keychain" -a login.keychain
complete -c security -n "__fish_seen_subcommand_from $generic $internet" -s a -x -d account
complete -c security -n "__fish_seen_subcommand_from $generic $internet" -s s -x -d 'service or server'
complete -c security -n "__fish_seen_subcommand_from $generic $internet" -s l -x -d label
complete -c security -n "__fish_seen_subcommand_from $generic $internet" -s j -x -d comment
complete -c security -n "__fish_seen_subcommand_from $generic $internet" -s D -x -d kind
complete -c security -n "__fish_seen_subcommand_from $generic" -s G -x -d 'generic attribute'
complete -c security -n "__fish_seen_subcommand_from $internet" -s r -x -d 'protocol (four characters)'
complete -c security -n "__fish_seen_subcommand_from $internet" -s P -x -d port
complete -c security -n "__fish_seen_subcommand_from $internet" -s p -x -d path
complete -c security -n "__fish_seen_subcommand_from $internet" -s d -x -d 'security domain'
complete -c security -n "__fish_seen_subcommand_from $internet" -s t -x -d 'authentication type'
complete -c security -n "__fish_seen_subcommand_from $adds" -s U -d 'update if it exists'
complete -c security -n "__fish_seen_subcommand_from $adds" -s T -r -F -d 'accepted; access is by access group'
complete -c security -n "__fish_seen_subcommand_from $adds" -s A -d 'accepted; access is by access group'
complete -c security -n "__fish_seen_subcommand_from $adds" -l accessibility -x -a 'whenUnlocked afterFirstUnlock whenUnlockedThisDeviceOnly afterFirstUnlockThisDeviceOnly whenPasscodeSetThisDeviceOnly'
complete -c security -n "__fish_seen_subcommand_from $adds $finds" -s w -d 'the secret'
complete -c security -n "__fish_seen_subcommand_from $finds" -s g -d 'the secret on standard error'
complete -c security -n "__fish_seen_subcommand_from dump-keychain" -s d -d 'with the secrets'
complete -c security -n "__fish_seen_subcommand_from $lists" -s d -x -a 'user dynamic common system' -d 'preference domain'
complete -c security -n "__fish_seen_subcommand_from add-credential list-credentials delete-credential" -s u -x -d 'the systemd unit'
complete -c security -n "__fish_seen_subcommand_from add-credential delete-credential" -s c -x -d 'the credential id'
complete -c security -n "__fish_seen_subcommand_from add-credential" -s s -x -d 'service of the item to serve'
complete -c security -n "__fish_seen_subcommand_from add-credential" -s a -x -d 'account of the item to serve'
complete -c security -n "__fish_seen_subcommand_from add-credential" -s w -d 'the secret'
complete -c security -n "__fish_seen_subcommand_from add-credential" -s U -d 'replace a grant'
complete -c security -n "__fish_seen_subcommand_from add-credential" -l accessibility -x -a 'whenUnlocked afterFirstUnlock whenUnlockedThisDeviceOnly afterFirstUnlockThisDeviceOnly whenPasscodeSetThisDeviceOnly'
