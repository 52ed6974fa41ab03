import CGio

/// GVariant in and out, the few shapes the Secret Service uses. Values made
/// here are floating: the builder, tuple or reply they go into takes them.
enum Variant {
    typealias Value = OpaquePointer

    static func string(_ s: String) -> Value { g_variant_new_string(s) }
    static func path(_ p: String) -> Value { g_variant_new_object_path(p) }
    static func bool(_ b: Bool) -> Value { g_variant_new_boolean(b ? 1 : 0) }
    static func uint64(_ n: UInt64) -> Value { g_variant_new_uint64(guint64(n)) }
    static func boxed(_ v: Value) -> Value { g_variant_new_variant(v) }
    static func bytes(_ b: [UInt8]) -> Value { b.withUnsafeBytes { apphome_bytes($0.baseAddress, gsize($0.count)) } }

    static func tuple(_ items: [Value]) -> Value {
        var children: [Value?] = items
        return children.withUnsafeMutableBufferPointer { g_variant_new_tuple($0.baseAddress, gsize($0.count)) }
    }

    static func paths(_ list: [String]) -> Value {
        if list.isEmpty { return apphome_empty_array("o") }
        let b = apphome_builder_new("ao")
        for p in list { g_variant_builder_add_value(b, path(p)) }
        return apphome_builder_finish(b)
    }

    static func stringMap(_ map: [(String, String)]) -> Value {
        let b = apphome_builder_new("a{ss}")
        for (k, v) in map { g_variant_builder_add_value(b, g_variant_new_dict_entry(string(k), string(v))) }
        return apphome_builder_finish(b)
    }

    /// `a{sv}` from (name, value) pairs (each value is boxed here).
    static func propertyMap(_ entries: [(String, Value)]) -> Value {
        let b = apphome_builder_new("a{sv}")
        for (k, v) in entries { g_variant_builder_add_value(b, g_variant_new_dict_entry(string(k), boxed(v))) }
        return apphome_builder_finish(b)
    }

    /// `a{o(oayays)}` from (item, secret struct) pairs.
    static func secretsMap(_ entries: [(String, Value)]) -> Value {
        let b = apphome_builder_new("a{o(oayays)}")
        for (p, s) in entries { g_variant_builder_add_value(b, g_variant_new_dict_entry(path(p), s)) }
        return apphome_builder_finish(b)
    }

    /// A secret struct `(oayays)`.
    static func secret(session: String, parameters: [UInt8], value: [UInt8], contentType: String) -> Value {
        tuple([path(session), bytes(parameters), bytes(value), string(contentType)])
    }

    // MARK: Reading (the caller's values are borrowed, children released here)

    static func child(_ v: Value, _ i: Int) -> Value { g_variant_get_child_value(v, gsize(i)) }
    static func count(_ v: Value) -> Int { Int(g_variant_n_children(v)) }
    static func typeString(_ v: Value) -> String { String(cString: g_variant_get_type_string(v)) }

    static func withChild<R, E: Error>(_ v: Value, _ i: Int, _ body: (Value) throws(E) -> R) throws(E) -> R {
        let c = child(v, i)
        defer { g_variant_unref(c) }
        return try body(c)
    }

    /// A string or object path's bytes (GDBus has checked them: valid UTF-8).
    static func text(_ v: Value) -> String { String(cString: g_variant_get_string(v, nil)) }
    static func boolean(_ v: Value) -> Bool { g_variant_get_boolean(v) != 0 }

    static func byteArray(_ v: Value) -> [UInt8] {
        var n: gsize = 0
        guard let p = g_variant_get_fixed_array(v, &n, 1), n > 0 else { return [] }
        return Array(UnsafeRawBufferPointer(start: p, count: Int(n)))
    }

    static func pathList(_ v: Value) -> [String] {
        (0..<count(v)).map { i in withChild(v, i) { text($0) } }
    }

    /// `a{ss}` as pairs, in order.
    static func pairs(_ v: Value) -> [(String, String)] {
        (0..<count(v)).map { i in
            withChild(v, i) { e in (withChild(e, 0) { text($0) }, withChild(e, 1) { text($0) }) }
        }
    }

    /// `a{sv}` as (key, unboxed value) pairs; each value is a new reference the caller releases.
    static func properties(_ v: Value) -> [(String, Value)] {
        (0..<count(v)).map { i in
            withChild(v, i) { e in (withChild(e, 0) { text($0) }, withChild(e, 1) { g_variant_get_variant($0) }) }
        }
    }
}
