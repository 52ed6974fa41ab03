/// The one argument scanner of the four commands: options before the verb
/// (`--root DIR`, `--root=DIR`, `-currentHost`, `-host NAME`) and a verb's
/// own options (`security`'s `-a ACCOUNT -w`).
///
/// It only scans: each command decides what an option means, and its usage
/// errors read as that command's (`option --root needs a directory`).
public struct ArgumentScanner {
    /// How an option takes its value.
    public enum Value: Sendable, Equatable {
        /// A flag: no value.
        case none
        /// The next argument, or `=VALUE` inline for a `--long` option.
        case required(String)
        /// The next argument when there is one; none when the option is last
        /// (`security add-… -w` prompts for the secret then).
        case optional
    }

    /// One option the command knows.
    public struct Option: Sendable {
        public var name: String
        public var value: Value
        /// What an empty value should have been (`--root ''`: "a
        /// directory"), or `nil` when an empty value is allowed.
        public var emptyRefusal: String?

        /// - Parameters:
        ///   - value: `.required("a value")` names what is missing, for the
        ///     error when no value follows.
        ///   - empty: refuses an empty value: `option NAME needs <empty>`.
        public init(_ name: String, _ value: Value = .none, empty: String? = nil) {
            self.name = name; self.value = value; self.emptyRefusal = empty
        }
    }

    /// What was scanned: an option and its value (nil for a flag, or an
    /// optional value that was not given).
    public struct Match: Sendable, Equatable {
        public var name: String
        public var value: String?
    }

    /// The arguments not scanned yet.
    public private(set) var rest: ArraySlice<String>

    public init(_ arguments: [String]) { rest = arguments[...] }
    public init(_ arguments: ArraySlice<String>) { rest = arguments }

    /// Scans the options at the front, stopping at the first argument that
    /// is not one of `options` and does not start with `-`, or at one of
    /// `stopAt` (left unscanned). `stopAt` is a short list, not a `Set`:
    /// building a set costs a command's start-up more than the scan.
    ///
    /// - Parameter unknown: the error for an argument that starts with `-`
    ///   and is none of `options`, or `nil` to stop there instead.
    /// - Throws: `unknown`'s error, or ``CommandFailure/usage(_:)`` for a
    ///   missing or empty value.
    public mutating func leadingOptions(_ options: [Option], stopAt: [String] = [],
                                        unknown: (String) -> CommandFailure?) throws(CommandFailure) -> [Match] {
        var found: [Match] = []
        while let arg = rest.first, arg.hasPrefix("-"), !stopAt.contains(arg) {
            guard let match = try scanOne(arg, options) else {
                if let failure = unknown(arg) { throw failure }
                break
            }
            found.append(match)
        }
        return found
    }

    /// Scans every remaining argument as an option of `options`.
    ///
    /// - Parameter unexpected: the error for an argument that is no option
    ///   (it is given the argument and whether it starts with `-`).
    public mutating func allOptions(_ options: [Option], unexpected: (String, Bool) -> CommandFailure) throws(CommandFailure) -> [Match] {
        var found: [Match] = []
        while let arg = rest.first {
            guard let match = try scanOne(arg, options) else { throw unexpected(arg, arg.hasPrefix("-")) }
            found.append(match)
        }
        return found
    }

    /// Takes the next argument, if any.
    public mutating func next() -> String? { rest.popFirst() }

    private mutating func scanOne(_ arg: String, _ options: [Option]) throws(CommandFailure) -> Match? {
        let eq = arg.hasPrefix("--") ? arg.firstIndex(of: "=") : nil
        let name = eq.map { String(arg[..<$0]) } ?? arg
        guard let option = options.first(where: { $0.name == name }) else { return nil }
        if eq != nil, case .none = option.value { return nil }
        rest.removeFirst()
        switch option.value {
        case .none:
            return Match(name: name, value: nil)
        case .optional:
            return Match(name: name, value: rest.popFirst())
        case .required(let what):
            let value: String
            if let eq { value = String(arg[arg.index(after: eq)...]) } else {
                guard let v = rest.popFirst() else { throw .usage("option \(name) needs \(what)") }
                value = v
            }
            if let empty = option.emptyRefusal, value.isEmpty { throw .usage("option \(name) needs \(empty)") }
            return Match(name: name, value: value)
        }
    }
}
