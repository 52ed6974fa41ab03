/// A relative reference resolved against a base URI, as RFC 3986 section 5.2
/// says (and as Foundation's `NSURL(string:relativeTo:)` gives `absoluteString`):
/// `index.xml` against `https://www.swift.org` is `https://www.swift.org/index.xml`.
enum URLResolution {
    /// The five parts of RFC 3986's appendix B; a part that is absent is `nil`.
    struct Parts {
        var scheme: ArraySlice<UInt8>?
        var authority: ArraySlice<UInt8>?
        var path: [UInt8]
        var query: ArraySlice<UInt8>?
        var fragment: ArraySlice<UInt8>?

        init(_ text: [UInt8]) {
            var i = 0
            let n = text.count
            // scheme: one or more bytes other than ":/?#", then ":"
            var k = 0
            while k < n, !":/?#".utf8.contains(text[k]) { k += 1 }
            if k > 0, k < n, text[k] == UInt8(ascii: ":") {
                scheme = text[0..<k]
                i = k + 1
            }
            if i + 1 < n, text[i] == UInt8(ascii: "/"), text[i + 1] == UInt8(ascii: "/") {
                var e = i + 2
                while e < n, !"/?#".utf8.contains(text[e]) { e += 1 }
                authority = text[(i + 2)..<e]
                i = e
            }
            var e = i
            while e < n, text[e] != UInt8(ascii: "?"), text[e] != UInt8(ascii: "#") { e += 1 }
            path = Array(text[i..<e])
            i = e
            if i < n, text[i] == UInt8(ascii: "?") {
                e = i + 1
                while e < n, text[e] != UInt8(ascii: "#") { e += 1 }
                query = text[(i + 1)..<e]
                i = e
            }
            if i < n, text[i] == UInt8(ascii: "#") { fragment = text[(i + 1)..<n] }
        }

        init(scheme: ArraySlice<UInt8>?, authority: ArraySlice<UInt8>?, path: [UInt8],
             query: ArraySlice<UInt8>?, fragment: ArraySlice<UInt8>?) {
            self.scheme = scheme
            self.authority = authority
            self.path = path
            self.query = query
            self.fragment = fragment
        }

        /// Section 5.3: the parts recomposed.
        var text: [UInt8] {
            var out: [UInt8] = []
            if let scheme { out += scheme; out.append(UInt8(ascii: ":")) }
            if let authority { out += Array("//".utf8); out += authority }
            out += path
            if let query { out.append(UInt8(ascii: "?")); out += query }
            if let fragment { out.append(UInt8(ascii: "#")); out += fragment }
            return out
        }
    }

    /// `reference` resolved against `base` (section 5.2.2, strict).
    static func resolve(_ reference: String, against base: String) -> String {
        let r = Parts(Array(reference.utf8)), b = Parts(Array(base.utf8))
        let t: Parts
        if r.scheme != nil {
            t = Parts(scheme: r.scheme, authority: r.authority, path: removingDotSegments(r.path), query: r.query, fragment: r.fragment)
        } else if r.authority != nil {
            t = Parts(scheme: b.scheme, authority: r.authority, path: removingDotSegments(r.path), query: r.query, fragment: r.fragment)
        } else if r.path.isEmpty {
            t = Parts(scheme: b.scheme, authority: b.authority, path: b.path, query: r.query ?? b.query, fragment: r.fragment)
        } else if r.path.first == UInt8(ascii: "/") {
            t = Parts(scheme: b.scheme, authority: b.authority, path: removingDotSegments(r.path), query: r.query, fragment: r.fragment)
        } else {
            t = Parts(scheme: b.scheme, authority: b.authority, path: removingDotSegments(merge(b, r.path)), query: r.query, fragment: r.fragment)
        }
        return String(decoding: t.text, as: UTF8.self)
    }

    /// Section 5.2.3.
    private static func merge(_ base: Parts, _ path: [UInt8]) -> [UInt8] {
        if base.authority != nil && base.path.isEmpty { return [UInt8(ascii: "/")] + path }
        guard let slash = base.path.lastIndex(of: UInt8(ascii: "/")) else { return path }
        return Array(base.path[...slash]) + path
    }

    /// Section 5.2.4: `.` and `..` segments removed.
    static func removingDotSegments(_ path: [UInt8]) -> [UInt8] {
        var input = path[...]
        var output: [UInt8] = []
        func starts(_ s: String) -> Bool { input.starts(with: s.utf8) }
        func dropLastSegment() {
            if let slash = output.lastIndex(of: UInt8(ascii: "/")) { output.removeSubrange(slash...) } else { output.removeAll() }
        }
        while !input.isEmpty {
            if starts("../") { input = input.dropFirst(3) }
            else if starts("./") { input = input.dropFirst(2) }
            else if starts("/./") { input = input.dropFirst(2) }
            else if input.elementsEqual("/.".utf8) { input = [UInt8(ascii: "/")][...] }
            else if starts("/../") { input = input.dropFirst(3); dropLastSegment() }
            else if input.elementsEqual("/..".utf8) { input = [UInt8(ascii: "/")][...]; dropLastSegment() }
            else if input.elementsEqual(".".utf8) || input.elementsEqual("..".utf8) { input = [][...] }
            else {
                var e = input.startIndex
                if input[e] == UInt8(ascii: "/") { e += 1 }
                while e < input.endIndex, input[e] != UInt8(ascii: "/") { e += 1 }
                output += input[input.startIndex..<e]
                input = input[e...]
            }
        }
        return output
    }
}
