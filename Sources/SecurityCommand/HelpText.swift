/// The text `security --help` prints, and each verb's usage.
enum HelpText {
    static let addGeneric = """
    usage: security add-generic-password -a account -s service [-l label] [-j comment] [-D kind] [-G generic] [-U] [-w [secret]]
        The secret is read from standard input (one line) when it is not a terminal,
        else prompted for. -w <secret> also works but puts the secret in the process list.
        -U updates the item if it exists.

    """
    static let findGeneric = """
    usage: security find-generic-password [-a account] [-s service] [-l label] [-j comment] [-D kind] [-G generic] [-g] [-w]
        -w prints only the secret; -g prints it on standard error as password: "…".

    """
    static let deleteGeneric = """
    usage: security delete-generic-password [-a account] [-s service] [-l label] [-j comment] [-D kind] [-G generic]

    """
    static let addInternet = """
    usage: security add-internet-password -s server [-a account] [-r protocol] [-P port] [-p path] [-d domain]
                                          [-t authtype] [-l label] [-j comment] [-D kind] [-U] [-w [secret]]
        protocol and authtype are four-character codes (htps, http, ftp…; dflt).

    """
    static let findInternet = """
    usage: security find-internet-password [-s server] [-a account] [-r protocol] [-P port] [-p path] [-d domain]
                                           [-t authtype] [-l label] [-j comment] [-D kind] [-g] [-w]

    """
    static let deleteInternet = """
    usage: security delete-internet-password [-s server] [-a account] [-r protocol] [-P port] [-p path] [-d domain]
                                             [-t authtype] [-l label] [-j comment] [-D kind]

    """
    static let dump = """
    usage: security dump-keychain [-d]
        -d also prints each item's secret.

    """
    static let error = """
    usage: security error <OSStatus>

    """

    static let full = """
    usage: security [--root DIR] [--app BUNDLE-ID] [--access-group GROUP] <verb> [options]

    The AppHome keychain, with macOS security(1) syntax. Items belong to an app:
    --app BUNDLE-ID (an installed app), else the app `apphome run` started
    ($APPHOME_BUNDLE_ID). An app sees only the items of its access groups, the
    ones its signature granted at install: its signed keychain-access-groups,
    then its bundle id, then its app groups. An add goes to the first; a search
    covers them all. --access-group GROUP adds to, finds in, deletes from or
    dumps that one group; a group the app does not hold fails with
    errSecMissingEntitlement (-34018).

    Verbs:
      add-generic-password       add a generic password (-a account -s service)
      find-generic-password      find one; -w prints only the secret
      delete-generic-password    delete one
      add-internet-password      add an internet password (-s server -a account -r protocol -P port -p path)
      find-internet-password     find one; -w prints only the secret
      delete-internet-password   delete one
      dump-keychain              list the app's items (secrets only with -d)
      error <OSStatus>           describe a status code
      help                       print this help

    Secrets come from standard input or a prompt, never from the command line
    unless -w <secret> is given (with a warning: the process list shows it).
    Not found exits 44, a duplicate 45, a usage error 2.

    The root is --root DIR, else $APPHOME_ROOT, else $XDG_DATA_HOME/apphome,
    else ~/.local/share/apphome.

    The device root key of a new keychain goes to the Secret Service when a
    session bus is set, else to a 0600 key file; APPHOME_KEYCHAIN_KEY_STORE=file
    forces the file. A key fetched from the Secret Service stays in the kernel
    keyring for APPHOME_KEYCHAIN_KEY_CACHE seconds (default 300; 0 disables).

    When prefsd answers for the root, the calls go through it, with the app's
    credential (APPHOME_PREFSD=off|auto|require, APPHOME_SOCKET; as defaults).

    """
}
