/// The text `security --help` prints, and each verb's usage.
enum HelpText {
    static let addGeneric = """
    usage: security add-generic-password -a account -s service [-l label] [-j comment] [-D kind] [-G generic] [-U]
                                         [-T app-path]... [-A] [--accessibility CLASS] [-w [secret]] [keychain]
        The secret is all of standard input when it is not a terminal, with or without
        a trailing -w: several lines stay several lines, only one final line end (\\n or
        \\r\\n) is dropped, and an empty standard input is an error. On a terminal it is
        prompted for, twice. -w <secret> also works but puts the secret in the process
        list; -w '' stores an empty secret.
        -U updates the item if it exists. CLASS is when the item can be read (default
        whenUnlocked): whenUnlocked, afterFirstUnlock, whenUnlockedThisDeviceOnly,
        afterFirstUnlockThisDeviceOnly, whenPasscodeSetThisDeviceOnly.
        -T and -A (macOS's per-application access list) are accepted, with a note on
        standard error: the app's access groups decide who reads the item.
        keychain: login.keychain (also login.keychain-db, any path to it), or an
        access group's <group>.keychain; see list-keychains.

    """
    static let findGeneric = """
    usage: security find-generic-password [-a account] [-s service] [-l label] [-j comment] [-D kind] [-G generic] [-g] [-w]
                                          [keychain]
        -w prints only the secret: as it is when it is valid UTF-8, else as
        lowercase hex of its exact bytes (no prefix; macOS prints hex too).
        -g prints it on standard error as password: "…" (octal escapes for
        control characters), or as password: 0x<hex> when it is not UTF-8.

    """
    static let deleteGeneric = """
    usage: security delete-generic-password [-a account] [-s service] [-l label] [-j comment] [-D kind] [-G generic]
                                            [keychain]

    """
    static let addInternet = """
    usage: security add-internet-password -s server [-a account] [-r protocol] [-P port] [-p path] [-d domain]
                                          [-t authtype] [-l label] [-j comment] [-D kind] [-U]
                                          [-T app-path]... [-A] [--accessibility CLASS] [-w [secret]] [keychain]
        protocol and authtype are four-character codes (htps, http, ftp…; dflt).
        The secret as for add-generic-password (echo pw | security add-internet-password
        -s host -a u -w works). CLASS, -T, -A and keychain as for add-generic-password
        (default class whenUnlocked).

    """
    static let findInternet = """
    usage: security find-internet-password [-s server] [-a account] [-r protocol] [-P port] [-p path] [-d domain]
                                           [-t authtype] [-l label] [-j comment] [-D kind] [-g] [-w] [keychain]
        -w and -g print the secret as for find-generic-password.

    """
    static let deleteInternet = """
    usage: security delete-internet-password [-s server] [-a account] [-r protocol] [-P port] [-p path] [-d domain]
                                             [-t authtype] [-l label] [-j comment] [-D kind] [keychain]

    """
    static let dump = """
    usage: security dump-keychain [-d] [keychain]
        Lists the app's items with their class (accessible: …); -d also prints
        each item's secret (quoted, or 0x<hex> when it is not UTF-8). Items of a
        class that is not open now are left out.

    """
    static let lock = """
    usage: security lock-keychain [keychain]
        Locks the Secret Service collection holding the keychain's device key
        (a passphrase keychain: drops its session from the kernel's keyring):
        whenUnlocked… items close; afterFirstUnlock… items stay open until reboot.
        A running prefsd is told, and drops every class key it keeps.

    """
    static let unlock = """
    usage: security unlock-keychain [keychain]
        Unlocks the Secret Service collection holding the device key: with the
        collection's password on standard input (gnome-keyring, no prompt), else
        through the service's own prompt. A passphrase keychain (create-keychain):
        its passphrase from standard input or a prompt; it stays unlocked in the
        kernel's user keyring until lock-keychain, reboot or logout.

    """
    static let create = """
    usage: security create-keychain
        Makes the root's keychain with its device key sealed under a passphrase
        (Argon2id) instead of the Secret Service or a plain key file, and unlocks it
        for the session. The passphrase comes from standard input, else a prompt
        (twice). For machines without a Secret Service.

    """
    static let info = """
    usage: security show-keychain-info
        Prints whether the keychain is locked or unlocked, where its device key
        is, and whether afterFirstUnlock… items are open.

    """
    static let addCredential = """
    usage: security add-credential -u unit -c id [-s service -a account | -w [secret]]
                                   [--accessibility CLASS] [-U]
        Grants the systemd unit (foo.service) the credential id (LoadCredential=id:…):
        prefsd's credential socket then serves it to that unit and no other. The
        bytes are the login keychain's generic password -s service -a account, read
        at each load, or a secret kept with the grant: all of standard input, byte
        for byte (a final line end is kept: use printf %s), a prompt on a terminal,
        or -w secret.
        At most 1 MiB. CLASS is when the grant can be served (default
        afterFirstUnlock: from the first unlock after boot). -U replaces a grant.
        Grants are items of the login keychain (encrypted, like any item);
        see docs/credentials.md.

    """
    static let listCredentials = """
    usage: security list-credentials [-u unit]
        Lists the grants: unit, credential id, class, and where the bytes come from
        (secret, or item service=… account=…), one per line, tab-separated. Never
        prints a secret.

    """
    static let deleteCredential = """
    usage: security delete-credential -u unit -c id
        Removes the grant; the unit gets nothing for that id any more.

    """
    static let error = """
    usage: security error <status>
        Describes an OSStatus (-25300) or one of security's own exit statuses (44,
        the low byte of errSecItemNotFound; 2, a usage error).

    """
    static let listKeychains = """
    usage: security list-keychains [-d user|dynamic|common|system]
        Prints the keychains searched, one quoted path a line: the login keychain,
        or with an app context (--app, apphome run) the files of the app's access
        groups. The list is fixed: no -s. The system and common domains are empty.

    """
    static let defaultKeychain = """
    usage: security default-keychain [-d user|dynamic|common|system]
        Prints the keychain an add goes to: the login keychain with no app context,
        else the app's first access group (or --access-group's). It cannot be set.

    """
    static let loginKeychain = """
    usage: security login-keychain [-d user|dynamic|common|system]
        Prints the user's login keychain (the group login, which no app holds).

    """

    static let full = """
    usage: security [--root DIR] [--app BUNDLE-ID] [--access-group GROUP] <verb> [options]

    The AppHome keychain, with macOS security(1) syntax. Items belong to an app:
    --app BUNDLE-ID (an installed app), else the app `apphome run` started
    ($APPHOME_BUNDLE_ID), else the user's login keychain (the group `login`,
    which no app can hold): no app means the login keychain. A keychain after
    the options (login.keychain, login.keychain-db, <group>.keychain) picks one. An app sees only the items of its access groups, the
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
      create-keychain            make a passphrase-protected keychain (no Secret Service needed)
      lock-keychain              lock the keychain (its Secret Service collection, or passphrase session)
      unlock-keychain            unlock it (password on standard input, or the service's prompt)
      show-keychain-info         print locked or unlocked
      add-credential             grant a systemd unit a credential (-u unit -c id; -s/-a item, or a secret)
      list-credentials           list the grants prefsd's credential socket serves
      delete-credential          remove a grant (-u unit -c id)
      list-keychains             print the keychains searched (quoted paths)
      default-keychain           print the keychain an add goes to
      login-keychain             print the login keychain
      error <status>             describe a status code, or one of security's exit statuses
      help [<verb>]              print this help, or one verb's (also <verb> -h or --help)

    --version prints the version.

    Secrets come from standard input (all of it, less one final line end; empty
    is an error) or a prompt, never from the command line unless -w <secret> is
    given (with a warning: the process list shows it). They are printed
    unaltered: -w prints a valid UTF-8 secret as it is and any other secret as
    lowercase hex. Not found exits 44, a duplicate 45, a usage error 2
    (security error 44 says what a status means).

    The root is --root DIR (before the verb or after it), else $APPHOME_ROOT,
    else $XDG_DATA_HOME/apphome, else ~/.local/share/apphome.

    The device root key of a new keychain goes to the Secret Service when a
    session bus is set, else to a 0600 key file; APPHOME_KEYCHAIN_KEY_STORE=file
    forces the file. When a bus is set but the service cannot store the key (no
    login keyring, a locked collection, no service answering), making the
    keychain fails with the service's reason (exit 53); it never falls back to
    a file on its own. Each item has a class (--accessibility): whenUnlocked… items
    open only while the Secret Service collection is unlocked (a locked keychain
    answers -25308, "User interaction is not allowed.", exit 36);
    afterFirstUnlock… items from the first unlock after boot, their keys kept
    in the kernel's user keyring until reboot (or APPHOME_KEYCHAIN_KEY_CACHE
    seconds; 0: not kept). With a plain key file every class but
    whenPasscodeSetThisDeviceOnly is always open.

    When prefsd answers for the root, the calls go through it, with the app's
    credential (APPHOME_PREFSD=off|auto|require, APPHOME_SOCKET; as defaults).

    """
}
