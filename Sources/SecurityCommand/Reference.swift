import CommandSupport

extension SecurityCommand {
    /// The verbs and options of `security`: what help, `security.1` and the
    /// completions are checked against, and what `help VERB` knows.
    public static let reference = CommandReference(
        command: "security",
        options: ["--root", "--app", "--access-group", "--help", "-h", "--version"],
        verbs: [
            .init("add-generic-password", options: ["-a", "-s", "-l", "-j", "-D", "-G", "-U", "-T", "-A", "--accessibility", "-w"]),
            .init("find-generic-password", options: ["-a", "-s", "-l", "-j", "-D", "-G", "-g", "-w"]),
            .init("delete-generic-password", options: ["-a", "-s", "-l", "-j", "-D", "-G"]),
            .init("add-internet-password", options: ["-s", "-a", "-r", "-P", "-p", "-d", "-t", "-l", "-j", "-D", "-U", "-T", "-A",
                                                     "--accessibility", "-w"]),
            .init("find-internet-password", options: ["-s", "-a", "-r", "-P", "-p", "-d", "-t", "-l", "-j", "-D", "-g", "-w"]),
            .init("delete-internet-password", options: ["-s", "-a", "-r", "-P", "-p", "-d", "-t", "-l", "-j", "-D"]),
            .init("dump-keychain", options: ["-d"]),
            .init("create-keychain"),
            .init("lock-keychain"),
            .init("unlock-keychain"),
            .init("show-keychain-info"),
            .init("list-keychains", options: ["-d"]),
            .init("default-keychain", options: ["-d"]),
            .init("login-keychain", options: ["-d"]),
            .init("add-credential", options: ["-u", "-c", "-s", "-a", "-w", "--accessibility", "-U"]),
            .init("list-credentials", options: ["-u"]),
            .init("delete-credential", options: ["-u", "-c"]),
            .init("error"),
            .init("help"),
        ])
}
