import CommandSupport

extension AppHomeCommand {
    /// The verbs and options of `apphome`: what help, `apphome.1` and the
    /// completions are checked against, and what `help VERB` knows.
    public static let reference = CommandReference(
        command: "apphome",
        options: ["--root", "--help", "-h", "--version"],
        verbs: [
            .init("install"),
            .init("update", options: ["--allow-downgrade"]),
            .init("uninstall", options: ["--dry-run", "--forget-synced"]),
            .init("list", options: ["--json", "--running"]),
            .init("info"),
            .init("container", aliases: ["get_app_container"]),
            .init("run", options: ["--no-sandbox", "--no-network", "--talk-name"]),
            .init("launch", options: ["--no-sandbox", "--no-network", "--talk-name"]),
            .init("doctor", options: ["--dry-run"]),
            .init("purge-caches", options: ["--target-free"]),
            .init("clean-tmp"),
            .init("backup", options: ["--all", "--to", "--init", "--password", "--password-stdin"]),
            .init("restore", options: ["--from", "--snapshot", "--app", "--password", "--password-stdin", "--accept-unsettled", "--allow-downgrade"]),
            .init("backups", options: ["--from", "--verify", "--read-data-subset"]),
            .init("prune-backups", options: ["--keep", "--from", "--dry-run"]),
            .init("keygen"),
            .init("sign", options: ["--key"]),
            .init("verify"),
            .init("sync"),
            .init("settings", options: ["--listen", "--socket"]),
            .init("help"),
        ])
}
