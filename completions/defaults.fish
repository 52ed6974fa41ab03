# fish completion for AppHome's defaults(1): verbs, options, domains, and the keys of a
# domain (also after -g, -globalDomain and -app NAME). Installed as
# /usr/share/fish/vendor_completions.d/defaults.fish. The verbs and options are the list
# DefaultsCommand.reference holds; a test checks that they agree.

# The verb and its operands so far (options and their values left out; -g and
# -globalDomain as -g, -app NAME as -app=NAME), one a line, after the command's
# --root DIR when one is given ("--root DIR" on the first line).
function __apphome_defaults_words
    set -l words (commandline -opc)
    set -l root
    set -l verb
    set -l args
    set -l i 2
    while test $i -le (count $words)
        set -l word $words[$i]
        if test -z "$verb"
            switch $word
                case --root
                    set i (math $i + 1)
                    set root $words[$i]
                case --format --settings-bundle --idiom -host
                    set i (math $i + 1)
                case '-*'
                case '*'
                    set verb $word
            end
        else
            switch $word
                case --root --format --settings-bundle --idiom -host --profile --schema
                    set i (math $i + 1)
                case -g -globalDomain
                    set -a args -g
                case -app
                    set i (math $i + 1)
                    set -a args "-app=$words[$i]"
                case '-*'
                case '*'
                    set -a args $word
            end
        end
        set i (math $i + 1)
    end
    printf '%s\n' "$root" "$verb" $args
end

# Domains where the domain goes, keys where the key goes.
function __apphome_defaults_operands
    set -l cmd (commandline -opc)[1]
    set -l parsed (__apphome_defaults_words)
    set -l root
    test -n "$parsed[1]"; and set root --root $parsed[1]
    set -l verb (string lower -- $parsed[2])
    set -l args $parsed[3..-1]
    switch $verb
        case read read-type write rename delete remove delete-all export import validate range watch lint
        case '*'
            return
    end
    if test (count $args) -eq 0
        # `defaults domains` prints them separated by ", ".
        string split ', ' -- ($cmd $root domains 2>/dev/null)
    else if test (count $args) -eq 1
        contains -- $verb import export lint validate; and return
        set -l domain $args[1]
        string match -q -- '-app=*' $domain; and set domain -app (string replace -- '-app=' '' $domain)
        # The keys: the top-level entries of `defaults read DOMAIN` (four spaces in).
        $cmd $root read $domain 2>/dev/null | sed -n 's/^    \([^ "][^ ]*\) = .*/\1/p; s/^    "\(.*\)" = .*/\1/p'
    end
end

# The installed apps' bundle names (`apphome list --json` beside defaults, "name" less .app), for -app.
function __apphome_defaults_app_names
    set -l cmd (commandline -opc)[1]
    set -l apphome apphome
    string match -q -- '*/*' $cmd; and set apphome (dirname $cmd)/apphome
    set -l root (__apphome_defaults_words)[1]
    test -n "$root"; and set root --root $root
    $apphome $root list --json 2>/dev/null | sed -n 's/.*"name": "\([^"]*\)\.app".*/\1/p'
end

set -l verbs read read-type write rename delete remove delete-all import export domains find help printHostIdentifier watch apply lint validate range
complete -c defaults -f
complete -c defaults -n "not __fish_seen_subcommand_from $verbs" -a "$verbs"
complete -c defaults -n "__fish_seen_subcommand_from help" -a "$verbs"
# The options (before the verb, or right after it).
complete -c defaults -l root -r -a '(__fish_complete_directories)' -d 'the AppHome root'
complete -c defaults -l format -x -a 'text xml json' -d 'how values print'
complete -c defaults -l key-path -d 'keys are paths into nested values'
complete -c defaults -l settings-bundle -r -a '(__fish_complete_directories)' -d 'the schema bundle'
complete -c defaults -l idiom -x -a 'phone pad' -d 'the device the bundle is read for'
complete -c defaults -l force -d 'write values the schema refuses'
complete -c defaults -l synced -d "an app's synced key-value store"
complete -c defaults -o currentHost -d 'this host only'
complete -c defaults -o host -x -d 'the host named'
complete -c defaults -n "not __fish_seen_subcommand_from $verbs" -l help -s h -d 'print the help'
complete -c defaults -n "not __fish_seen_subcommand_from $verbs" -l version -d 'print the version'
# The domain and the keys.
complete -c defaults -n "__fish_seen_subcommand_from read read-type write rename delete remove delete-all export import validate range watch lint" -a '(__apphome_defaults_operands)'
complete -c defaults -n "__fish_seen_subcommand_from read read-type write rename delete remove delete-all export import validate range watch" -o g -o globalDomain -d 'the global domain'
complete -c defaults -n "__fish_seen_subcommand_from read read-type write rename delete remove delete-all export import validate range watch" -o app -x -a '(__apphome_defaults_app_names)' -d 'an installed app by name'
complete -c defaults -n "__fish_seen_subcommand_from read" -l effective -d 'the value through every layer'
complete -c defaults -n "__fish_seen_subcommand_from read" -l unarchive -d 'a keyed archive as its object graph'
complete -c defaults -n "__fish_seen_subcommand_from apply" -l dry-run -d 'write nothing'
complete -c defaults -n "__fish_seen_subcommand_from apply lint" -l json -d 'print JSON'
complete -c defaults -n "__fish_seen_subcommand_from apply import export" -F
complete -c defaults -n "__fish_seen_subcommand_from lint" -l strict -d 'warnings are errors'
complete -c defaults -n "__fish_seen_subcommand_from lint" -l profile -x -a 'apple iask'
complete -c defaults -n "__fish_seen_subcommand_from lint" -l schema -r -F
complete -c defaults -n "__fish_seen_subcommand_from write" -o string -o data -o int -o integer -o float -o bool -o boolean -o date -o array -o array-add -o dict -o dict-add
