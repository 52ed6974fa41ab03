/// The text `apphome help` prints, and the usage shown after a usage error.
enum HelpText {
    static let full = """
    usage: apphome [--root DIR] <verb> [arguments]

    Verbs:
      install <Name.app>                 install an app into a new home
      update <Name.app>                  install a new version, keeping Documents and Library
      uninstall <bundle-id>              remove an app, its home and all its data
      list [--json]                      list installed apps
      info <bundle-id>                   show an installed app's details
      container <bundle-id> [KIND]       print one path of an app; KIND is
                                         app (default), data, documents, library, caches or tmp
      run <bundle-id> -- CMD [ARG...]    run CMD inside the app's home and environment
      help                               print this help

    The root is --root DIR, else $APPHOME_ROOT, else $XDG_DATA_HOME/apphome,
    else ~/.local/share/apphome.
    uninstall goes through prefsd when its socket answers (APPHOME_PREFSD=
    off|auto|require, APPHOME_SOCKET), so that its cache and watchers follow.

    """
}
