import Foundation
import Testing

@Suite("domains and find")
struct DomainsFindTests {
    @Test func domainsListsNamesSortedOnOneLineWithoutTheGlobalDomain() throws {
        let root = try TempRoot()
        for name in ["org.zeta", "com.beta", "com.alpha"] {
            try root.succeed(["write", name, "k", "v"])
        }
        try root.succeed(["write", "-g", "k", "v"])
        let result = try root.succeed(["domains"])
        #expect(result.stdout == "com.alpha, com.beta, org.zeta\n")
    }

    /// Three domains: one whose name matches `blue`, one with matching keys and values
    /// (nested too), one without any match.
    private func populate(_ root: TempRoot) throws {
        try root.succeed(["write", "com.example.paint", "{ color = blue; size = 3; theme = \"Dark Blue\"; }"])
        try root.succeed(["write", "com.example.paint", "shades", "-array", "navy", "BLUEISH"])
        try root.succeed(["write", "com.example.paint", "blueprint", "-int", "1"])
        try root.succeed(["write", "com.example.blue", "{ a = 1; b = 2; }"])
        try root.succeed(["write", "com.example.none", "{ x = red; }"])
    }

    @Test func findPrintsMatchingKeysPerDomain() throws {
        let root = try TempRoot()
        try populate(root)
        let result = try root.succeed(["find", "blue"])
        #expect(result.stdout == """
            Found 2 keys in domain 'com.example.blue': {
                a = 1;
                b = 2;
            }
            Found 4 keys in domain 'com.example.paint': {
                blueprint = 1;
                color = blue;
                shades =     (
                    navy,
                    BLUEISH
                );
                theme = "Dark Blue";
            }

            """)
    }

    @Test func findIsCaseInsensitive() throws {
        let root = try TempRoot()
        try populate(root)
        let lower = try root.succeed(["find", "blue"])
        let upper = try root.succeed(["find", "BlUe"])
        #expect(lower.stdout == upper.stdout)
        #expect(lower.stdout.hasPrefix("Found 2 keys in domain 'com.example.blue': {\n"))
    }

    @Test func findWithoutAMatchSaysSoOnStderrAndExitsZero() throws {
        let root = try TempRoot()
        try populate(root)
        let result = try root.run(["find", "purple"])
        #expect(result.status == 0 && !result.signaled, "\(result)")
        #expect(result.stdoutData.isEmpty)
        #expect(result.stderr == "defaults: No domain, key, nor value containing 'purple'\n")
    }
}
