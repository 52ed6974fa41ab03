/// The text `apphome help` prints, and the usage shown after a usage error.
enum HelpText {
    /// The lines of `full` that describe `verb` (`apphome help backup`,
    /// `apphome backup --help`), under the usage line; `nil` for no such verb.
    static func section(for verb: String) -> String? {
        let lines = full.split(separator: "\n", omittingEmptySubsequences: false)
        guard let start = lines.firstIndex(where: { $0.hasPrefix("  " + verb + " ") || $0 == "  " + verb }) else { return nil }
        var end = start + 1
        while end < lines.count, lines[end].hasPrefix("     ") { end += 1 }
        return "usage: apphome [--root DIR] \(verb) …\n\n" + lines[start..<end].joined(separator: "\n") + "\n"
    }

    static let full = """
    usage: apphome [--root DIR] <verb> [arguments]

    Verbs:
      install <Name.app>                 install an app into a new home (a signed bundle must
                                         verify; an unsigned one may claim no shared group); errors in its
                                         Settings.bundle are shown on stderr (the
                                         install goes on; lint with 'defaults lint')
      update <Name.app> [--allow-downgrade]
                                         install a new version, keeping Documents and Library;
                                         a signed app takes only a bundle signed by its team;
                                         a lower CFBundleVersion is refused without --allow-downgrade
      uninstall [--dry-run] [--forget-synced] <bundle-id>
                                         remove an app, its home and all its data (its keychain
                                         items and app groups no other app holds too);
                                         --dry-run lists what would go and changes nothing;
                                         its synced key-value store stays on the other machines
                                         unless --forget-synced removes every key everywhere
      list [--json] [--running]          list installed apps; --running: the apps running
                                         now, and whether each is in its sandbox
      info <bundle-id>                   show an installed app's details
      container <bundle-id> [KIND]       print one path of an app; KIND is
                                         app (default), data, documents, library, caches or tmp;
                                         groups prints GROUP-ID<TAB>PATH per app group;
                                         get_app_container (simctl's name) is another name for it
      run <bundle-id> [--no-sandbox] [--no-network] [--talk-name NAME]... -- CMD [ARG...]
                                         run CMD in the app's sandbox (bubblewrap: its home,
                                         bundle and app groups, /usr, prefsd's socket; no
                                         other app's files, no ~, no keychain files) with
                                         its home's environment (XDG_CONFIG_HOME is its
                                         Library/Preferences, so Foundation's UserDefaults
                                         is the app's domain); --no-network cuts the
                                         network; --talk-name passes that session-bus name
                                         through xdg-dbus-proxy (never the Secret Service);
                                         --no-sandbox runs it unconfined, and says so
      launch <bundle-id> [--no-sandbox] [--no-network] [--talk-name NAME]... [--] [ARG...]
                                         start the installed bundle's CFBundleExecutable
                                         as run does; its exit status is apphome's
      doctor [--dry-run]                 find and repair what a crash left (interrupted
                                         install/update/uninstall, orphaned homes, stray files);
                                         rebuild a lost or damaged registry from the homes
      purge-caches [--target-free SIZE]  empty apps' and app groups' Library/Caches,
                                         oldest first, until SIZE is free (all of them
                                         without a target); SIZE in bytes or with K, M, G
                                         or T (powers of 1024): 500M, 1.5G
      clean-tmp                          empty tmp/ of every app that is not running
      backup <bundle-id>|--all [--to DIR|restic:REPO [--init]] [--password | --password-stdin]
                                         back up an app's home (not its bundle, Library/Caches
                                         or tmp) and its app groups' containers, incrementally,
                                         into DIR (default <root>/Backups), or as one snapshot
                                         into the restic repository REPO (its password: the login
                                         keychain's item apphome-restic, account REPO; --init
                                         creates the repository); a backup password (asked twice
                                         on the terminal with --password; one line of stdin with
                                         --password-stdin) lets migratable keychain items restore
                                         on another device
      restore <backup> [--from DIR|restic:REPO [--snapshot ID]] [--app <Name.app>]
              [--password | --password-stdin] [--accept-unsettled] [--allow-downgrade]
                                         restore a backup (a manifest path, or a bundle id for its
                                         newest backup in DIR or REPO) into a new home; --app
                                         installs the bundle too; a damaged backup or a wrong
                                         backup password is refused, nothing changes; files the
                                         backup could not take whole are named on stderr, exit 3
                                         unless --accept-unsettled; a backup or bundle older than
                                         the installed app is refused without --allow-downgrade
      backups [<bundle-id>] [--from DIR|restic:REPO] [--verify [--read-data-subset N/T]]
                                         list backups; --verify reads every stored file
                                         and checks it against its checksum, and every
                                         stored database with SQLite's integrity check
                                         (restic check for a repository)
      prune-backups --keep N [<bundle-id>] [--from DIR|restic:REPO] [--dry-run]
                                         keep each app's N newest backups; remove the older
                                         ones and the stored files no remaining backup needs
                                         (restic forget and prune for a repository)
      keygen KEYFILE                     make an Ed25519 publisher key pair: the secret key in
                                         KEYFILE (0600, never replaced), the public key in
                                         KEYFILE.pub; prints the team identifier. KEYFILE's
                                         directory must exist (mkdir -m 700 it first: no
                                         directory for a secret key is made on its own)
      sign <Name.app> --key KEYFILE      sign a bundle: _CodeSignature/CodeResources seals every
                                         file and the groups Info.plist claims (replaced if present)
      verify <Name.app>                  check a bundle's signature; prints its team, or names
                                         the first problem and exits 1
      sync setup FOLDER | status | now
                                         settings on every machine: FOLDER is one your sync
                                         engine (Syncthing) replicates; each machine writes only
                                         its own change log there; now merges every log into the
                                         apps' synced key-value stores once (prefsd does it live)
      settings [--listen 127.0.0.1:PORT | --socket PATH]
                                         the Settings app: every installed app's Settings.bundle
                                         as a web page, live; prints the URL to open (with a
                                         token) first, serves until Ctrl-C (port 0 or none: any)
      help [<verb>]                      print this help, or one verb's (also <verb> --help)

    --version prints the version; --help (or -h) is help.

    The root is --root DIR (before the verb or after it), else $APPHOME_ROOT,
    else $XDG_DATA_HOME/apphome, else ~/.local/share/apphome.
    uninstall goes through prefsd when its socket answers (APPHOME_PREFSD=
    off|auto|require, APPHOME_SOCKET), so that its cache and watchers follow.

    """
}
