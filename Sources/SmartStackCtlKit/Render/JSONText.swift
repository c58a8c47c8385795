public import SmartStackProtocol

/// JSON documents as text.
public enum JSONText {
    /// One line of compact JSON.
    public static func compact(_ object: JSONObject) -> String {
        String(decoding: JSON.serialize(.object(object)), as: UTF8.self)
    }
}
