/// The help `defaults help` prints: Apple's text (its layout, including the
/// double space in `-float  <`, but with its `Key>` typo corrected to `<key>`),
/// then AppHome's own options and verbs.
enum HelpText {
    static let apple = """
    Command line interface to a user's defaults.
    Syntax:

    'defaults' [-currentHost | -host <hostname>] followed by one of the following:

      read                                 shows all defaults
      read <domain>                        shows defaults for given domain
      read <domain> <key>                  shows defaults for given domain, key

      read-type <domain> <key>             shows the type for the given domain, key

      write <domain> <domain_rep>          writes domain (overwrites existing)
      write <domain> <key> <value>         writes key for domain

      rename <domain> <old_key> <new_key>  renames old_key to new_key

      delete <domain>                      deletes domain
      delete <domain> <key>                deletes key in domain
      delete-all <domain>                  deletes the domain from all containers
      delete-all <domain> <key>            deletes key in domain from all containers

      import <domain> <path to plist>      writes the plist at path to domain
      import <domain> -                    writes a plist from stdin to domain
      export <domain> <path to plist>      saves domain as a binary plist to path
      export <domain> -                    writes domain as an xml plist to stdout
      domains                              lists all domains
      find <word>                          lists all entries containing word
      help                                 print this help

    <domain> is ( <domain_name> | -app <application_name> | -globalDomain )
             or a path to a file omitting the '.plist' extension

    <value> is one of:
      <value_rep>
      -string <string_value>
      -data <hex_digits>
      -int[eger] <integer_value>
      -float  <floating-point_value>
      -bool[ean] (true | false | yes | no)
      -date <date_rep>
      -array <value1> <value2> ...
      -array-add <value1> <value2> ...
      -dict <key1> <value1> <key2> <value2> ...
      -dict-add <key1> <value1> ...

    """

    static let apphome = """

    AppHome options (before the verb, or right after it: read --format json D):
      --root <dir>             the AppHome root (default: $APPHOME_ROOT, else
                               $XDG_DATA_HOME/apphome, else ~/.local/share/apphome)
      --format text|xml|json   how read, read-type, export, domains and find
                               print values: text is the macOS layout (lossy);
                               xml and json keep every type (export to a file:
                               binary unless xml or json is asked for)
      --key-path               <key> is a path into nested values: components
                               separated by ':' ('\\:' for a colon), array items
                               by index, e.g. window:frame:0
      --help, -h               print this help; help <verb> or <verb> --help
                               prints one verb's
      --version                print the version
    An option a verb would not act on is a usage error. -g is -globalDomain;
    remove is another name for delete.

    AppHome verbs:
      printHostIdentifier      prints the identifier used for -currentHost files
      watch <domain> [<key>]   prints each change as it happens ("key = value",
                               "key deleted"), from any writer; through prefsd
                               when it answers, else by watching the file
      apply [--dry-run] [--json] <file>
                               bring every domain of the file to its desired
                               state (Schemas/apply.md), all or nothing:
                               every domain is checked, locked and prepared
                               before any is replaced; an interrupted apply is
                               finished by the next one; prints each change ("D: added K =
                               V", "changed", "removed"); --dry-run writes
                               nothing; --json prints {"changed", "changes"}

    Environment:
      APPHOME_PREFSD           off | auto (default) | require: whether to go
                               through prefsd when its socket answers
      APPHOME_SOCKET           prefsd's socket (default:
                               $XDG_RUNTIME_DIR/apphome/prefsd.sock)
      APPHOME_MANAGED_DIR      forced preferences (default /etc/apphome/managed):
                               <domain>.plist and .GlobalPreferences.plist,
                               root's and not group/other writable; their keys
                               win over every layer and cannot be written

    Settings bundles (a domain's schema; see docs/guide.md "Settings bundles"):
      lint [--json] [--strict] [--profile apple|iask] [--idiom phone|pad]
           [--schema FILE] <Settings.bundle|domain>
                               report every problem of a bundle with its rule
                               id (SB...); exit 1 on any error; --strict makes
                               warnings errors; iask accepts InAppSettingsKit
      validate <domain>        list stored values that break the domain's schema
      range <domain> <key>     what the schema accepts for the key (like
                               gsettings range): type, range MIN MAX, or enum
      write [--force] <domain> <key> <value>
                               a key the schema declares is checked first; a
                               bad value is refused and nothing is written;
                               --force writes it anyway (keys the schema does
                               not know are always accepted)
      import [--force] <domain> <path>
                               imported keys the schema declares are checked
                               the same way; one bad value refuses the import
      read --effective <domain> <key> [-Key value...]
                               the value through managed -> argument -> app ->
                               global -> registration (the bundle's DefaultValues), and
                               the layer it came from (--format json: one
                               object {"layer": …, "value": …})
      read --unarchive [<domain> [<key>]]
                               like read, but a value that is a keyed archive
                               (NSKeyedArchiver data) is shown as its object graph
      --settings-bundle <dir>  use this bundle as the schema (before the verb);
                               otherwise an installed app's Settings.bundle,
                               else <root>/Library/SettingsBundles/<domain>.bundle
      --idiom phone|pad        the device the bundle is read for (default phone)
      --force                  (before the verb) same as write --force
      --synced                 (before the verb) the domain is a synced key-value
                               store identifier an installed app's signature grants
                               (com.apple.developer.ubiquity-kvstore-identifier):
                               read, write, delete, export, watch as usual, within
                               Apple's limits (1,024 keys, keys of 64 bytes, 1 MB);
                               watch prints each change with its reason

    Exit status: 0 on success, 1 on failure, 255 on a usage error.

    """

    static var full: String { apple + apphome }
}
