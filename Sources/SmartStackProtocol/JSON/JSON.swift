/// JSON text ↔ `JSONValue` (RFC 8259), straight over bytes and without Foundation.
public enum JSON {
    /// How deep containers may nest unless a caller says otherwise.
    public static let defaultMaxDepth = 64

    /// Parses one JSON text: a value with optional whitespace around it and nothing else.
    ///
    /// Strict: no comments, trailing commas, leading zeros, `NaN`/`Infinity`, control characters in strings,
    /// unpaired `\u` surrogates, invalid UTF-8 or duplicate object keys. Numbers whose magnitude does not fit a
    /// `Double` are rejected. Containers nest at most `maxDepth` deep (the parser recurses once per level, so
    /// keep it moderate).
    public static func parse(
        _ bytes: some Collection<UInt8>, maxDepth: Int = defaultMaxDepth
    ) throws(JSONError) -> JSONValue {
        // The closures cannot throw a typed error out: the result carries it.
        func parsed(_ buffer: UnsafeBufferPointer<UInt8>) -> Result<JSONValue, JSONError> {
            Result { () throws(JSONError) in try parse(buffer: buffer, maxDepth: maxDepth) }
        }
        if let result = bytes.withContiguousStorageIfAvailable(parsed) { return try result.get() }
        return try Array(bytes).withUnsafeBufferPointer(parsed).get()
    }

    /// Compact JSON text for `value`.
    public static func serialize(_ value: JSONValue) -> [UInt8] {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(128)
        JSONWriter.write(value, into: &buffer)
        return buffer
    }

    /// Appends compact JSON text for `value` to `buffer` (reuse one buffer to avoid allocating per message).
    ///
    /// Strings are written as UTF-8 with `"`, `\` and control characters escaped; a non-finite `double`,
    /// which JSON cannot express, is written as `null`.
    public static func serialize(_ value: JSONValue, into buffer: inout [UInt8]) {
        JSONWriter.write(value, into: &buffer)
    }

    /// Appends compact JSON text for `object` to `buffer`.
    public static func serialize(_ object: JSONObject, into buffer: inout [UInt8]) {
        JSONWriter.write(object, into: &buffer)
    }

    /// Parses one JSON text where it lies.
    public static func parse(
        buffer: UnsafeBufferPointer<UInt8>, maxDepth: Int = defaultMaxDepth
    ) throws(JSONError) -> JSONValue {
        var parser = JSONParser(bytes: buffer, maxDepth: maxDepth)
        return try parser.parseDocument()
    }
}
