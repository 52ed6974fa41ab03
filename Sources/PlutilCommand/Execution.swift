import AppHomeSystem
import CommandSupport
import KeyedArchive
import PropertyList
import Synchronization

extension Invocation {
    /// The largest file `plutil` reads.
    static let readLimit = 512 << 20

    /// Values `-convert` leaves for the process's end to free (`plutil` exits
    /// after its files; tests that run it in process keep a few values longer).
    static let keptUntilExit = Mutex<[PlistValue]>([])

    /// Does the verb for each file; `false` when any file failed.
    func execute(console: Console) -> Bool {
        if case .print = verb, silent { console.err("-s doesn't make a lot of sense with -p.\n") }
        var ok = true
        var standardInput: [UInt8]?
        for path in paths {
            do throws(PlutilError) {
                try handle(path, console: console, standardInput: &standardInput)
            } catch {
                ok = false
                console.err("\(path == "-" ? "<stdin>" : path): \(error.text)\n")
            }
        }
        return ok
    }

    private func handle(_ path: String, console: Console, standardInput: inout [UInt8]?) throws(PlutilError) {
        if case .create(let format) = verb {
            try write(.dictionary([:]), format: format, source: path, keyPath: nil, console: console)
            return
        }
        let bytes = try read(path, console: console, standardInput: &standardInput)
        if console is ProcessConsole, paths.count == 1 { LargeInput.prepareHeap(forInputBytes: bytes.count) }
        switch verb {
        case .lint:
            do { _ = try PlistCodec.decode(bytes) } catch { throw .message("(\(error))") }
            if !silent { console.out("\(path == "-" ? "<stdin>" : path): OK\n") }
        case .print:
            var (value, _) = try parse(bytes)
            if unarchive { value = try Unarchiving.graph(value) }
            console.out(Formatting.printed(value, forTerminal: console.outputIsTerminal))
        case .convert(let format):
            var (value, _) = try parse(bytes)
            // The file's value is kept until the process ends: freeing a tree of millions
            // of values costs a tenth of a large conversion, and exit frees it at once.
            Self.keptUntilExit.withLock { $0.append(value) }
            if unarchive { value = try Unarchiving.graph(value) }
            if archive { value = try Unarchiving.archive(value) }
            Self.keptUntilExit.withLock { $0.append(value) }
            try write(value, format: format, source: path, keyPath: nil, console: console, sizeHint: 2 * bytes.count)
        case .insert(let keyPath, let newValue, let replacing, let appending):
            let (value, format) = try parse(bytes)
            let edited = try keyPath.inserting(newValue, into: value, replacing: replacing, appending: appending)
            try write(edited, format: format, source: path, keyPath: keyPath, console: console)
        case .remove(let keyPath):
            let (value, format) = try parse(bytes)
            guard let edited = try keyPath.removing(from: value) else {
                throw .message("Removing value resulted in an empty property list at \(keyPath.text)")
            }
            try write(edited, format: format, source: path, keyPath: keyPath, console: console)
        case .extract(let keyPath, let format, let expect):
            let (value, _) = try parse(bytes)
            let found = unarchive ? try Unarchiving.value(at: keyPath, in: value) : keyPath.value(in: value)
            guard let found else {
                throw .message("Could not extract value, error: No value at that key path or invalid key path: \(keyPath.text)")
            }
            try check(found, keyPath, expect)
            try write(found, format: format, source: path, keyPath: keyPath, console: console)
        case .type(let keyPath, let expect):
            let (value, _) = try parse(bytes)
            guard let found = keyPath.value(in: value) else {
                throw .message("Could not extract value, error: No value at that key path or invalid key path: \(keyPath.text)")
            }
            try check(found, keyPath, expect)
            try write(found, format: .type, source: path, keyPath: keyPath, console: console)
        case .help, .version, .create:
            break
        }
    }

    private func check(_ value: PlistValue, _ keyPath: KeyPath, _ expect: String?) throws(PlutilError) {
        guard let expect else { return }
        let actual = Formatting.typeName(value)
        if actual != expect { throw .message("Value at [\(keyPath.text)] expected to be \(expect) but is \(actual)") }
    }

    private func read(_ path: String, console: Console, standardInput: inout [UInt8]?) throws(PlutilError) -> [UInt8] {
        if path == "-" {
            if let bytes = standardInput { return bytes }
            let bytes = console.readStandardInput()
            standardInput = bytes
            return bytes
        }
        guard !path.isEmpty else { throw .message("Empty path specified") }
        do {
            guard let bytes = try FileSystem.readRegularFile(path, limit: Self.readLimit, followLinks: true) else {
                throw PlutilError.message("file does not exist or is not readable or is not a regular file")
            }
            return bytes
        } catch let error as PlutilError {
            throw error
        } catch {
            throw .message("file does not exist or is not readable or is not a regular file (\(error))")
        }
    }

    /// The file's value and format: a property list in any format, else JSON.
    private func parse(_ bytes: [UInt8]) throws(PlutilError) -> (PlistValue, OutputFormat) {
        let format = PlistCodec.detectFormat(bytes)
        do {
            return (try PlistCodec.decode(bytes, format: format), OutputFormat(format))
        } catch let plistError {
            do {
                return (try PlistCodec.decodePlainJSON(bytes), .json)
            } catch let jsonError {
                throw .message("Property List error: \(plistError) / JSON error: \(jsonError)")
            }
        }
    }

    /// Writes `value` in `format` where the options say: a file (replaced
    /// atomically), or standard output.
    /// `sizeHint`: about how many bytes the output will be (JSON's buffer is reserved once).
    private func write(_ value: PlistValue, format: OutputFormat, source: String, keyPath: KeyPath?, console: Console,
                       sizeHint: Int = 0) throws(PlutilError) {
        let destination = outputFile(source, format)
        var bytes: [UInt8]
        do {
            switch format {
            case .xml: bytes = try PlistCodec.encode(value, format: .xml)
            case .binary: bytes = try PlistCodec.encode(value, format: .binary)
            case .json: bytes = try Formatting.json(value, readable: readable, fragments: unarchive, sizeHint: sizeHint)
            case .swift: bytes = Array(try Formatting.swiftLiteral(value, sourcePath: source).utf8)
            case .objc: bytes = Array(try Formatting.objcLiteral(value, sourcePath: source, outputPath: destination).utf8)
            case .raw: bytes = Array(Formatting.raw(value).utf8)
            case .type: bytes = Array(Formatting.typeName(value).utf8)
            case .openStep: throw PlutilError.message("Conversion to OpenStep format is not supported")
            }
        } catch let error as PlutilError {
            throw error
        } catch {
            throw .message("Invalid object in plist for property list format (\(error))")
        }
        let toStandardOutput = outputPath == "-" || (outputPath == nil && (format == .raw || format == .type || source == "-"))
        if toStandardOutput {
            if newline && (format == .raw || format == .type) { bytes.append(0x0A) }
            console.out(bytes: bytes)
            return
        }
        do {
            try FileSystem.writeAtomicallyKeepingMode(bytes, to: destination)
        } catch {
            throw .message("\(error)")
        }
    }

    /// The file a result goes to: `-o`, else the source with `-e`'s extension
    /// (and `.swift` or `.m` for literals, so the source is never overwritten by one).
    private func outputFile(_ source: String, _ format: OutputFormat) -> String {
        if let outputPath { return outputPath }
        var result = source
        if let outputExtension { result = Self.replacingExtension(result, with: outputExtension) }
        if format == .swift { result = Self.replacingExtension(result, with: "swift") }
        if format == .objc { result = Self.replacingExtension(result, with: "m") }
        return result
    }

    static func replacingExtension(_ path: String, with ext: String) -> String {
        let bytes = Array(path.utf8)
        let slash = bytes.lastIndex(of: UInt8(ascii: "/")).map { $0 + 1 } ?? 0
        guard let dot = bytes.lastIndex(of: UInt8(ascii: ".")), dot > slash, path != ".", path != ".." else { return path }
        return String(decoding: bytes[..<(dot + 1)], as: UTF8.self) + ext
    }
}
