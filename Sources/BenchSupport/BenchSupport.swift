// What the benchmarks share (smartstack-bench, smartstack-store-bench, smartstack-load): one definition of the
// median and of a percentile, number formatting, and the JSON text their reports write.

/// The median: the middle value, or the mean of the two middle values of an even count; NaN when empty.
public func median(_ values: [Double]) -> Double {
    guard !values.isEmpty else { return .nan }
    let sorted = values.sorted()
    let middle = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

/// The nearest-rank percentile `p` (0…1) of values sorted ascending: the smallest value with at least a fraction
/// `p` of the values at or below it; 0 when empty.
public func percentile<Value: BinaryInteger>(sorted values: [Value], _ p: Double) -> Value {
    guard !values.isEmpty else { return 0 }
    let rank = Int((Double(values.count) * p).rounded(.up))
    return values[min(values.count - 1, max(0, rank - 1))]
}

/// `value` with `decimals` digits after the point (no exponent), right-aligned to `width`.
public func fixed(_ value: Double, _ decimals: Int = 1, width: Int = 0) -> String {
    var text: String
    if !value.isFinite {
        text = value.isNaN ? "n/a" : (value > 0 ? "inf" : "-inf")
    } else {
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let scaled = (abs(value) * scale).rounded()
        let whole = Int(scaled / scale)
        let fraction = Int(scaled - Double(whole) * scale)
        text = (value < 0 && scaled != 0 ? "-" : "") + String(whole)
        if decimals > 0 {
            let digits = String(fraction)
            text += "." + String(repeating: "0", count: decimals - digits.count) + digits
        }
    }
    return text.count >= width ? text : String(repeating: " ", count: width - text.count) + text
}

/// A number as JSON text (`null` when not finite).
public func jsonNumber(_ value: Double, decimals: Int = 4) -> String {
    value.isFinite ? fixed(value, decimals) : "null"
}

/// A string as JSON text.
public func jsonString(_ text: String) -> String {
    var out = "\""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "\n": out += "\\n"
        default:
            if scalar.value < 0x20 {
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
    }
    return out + "\""
}

/// A JSON object's text from its members in order (values already JSON text).
public func jsonObject(_ members: KeyValuePairs<String, String>) -> String {
    "{" + members.map { "\(jsonString($0.key)):\($0.value)" }.joined(separator: ",") + "}"
}

/// The Varlink calls `smartstack-load` sends, each appended as a NUL-terminated frame; `smartstack-wire-bench`
/// decodes the same frames.
public enum LoadFrames {
    /// The calls that make the load's stack `load`: `widgets` widgets, each of its own app (at least ten apps
    /// registered, the donations' apps), each frame NUL-terminated.
    public static func setUp(widgets: Int) -> [[UInt8]] {
        var calls: [[UInt8]] = []
        for app in 0..<max(10, widgets) {
            calls.append(
                Array(
                    #"{"method":"io.smartstack.Provider.RegisterWidget","parameters":{"app":"org.load.app\#(app)","kind":"main","families":["systemMedium"]}}"#
                        .utf8) + [0])
        }
        let widgets = (0..<widgets).map { #"{"instance":"w\#($0)","app":"org.load.app\#($0)","kind":"main"}"# }
            .joined(separator: ",")
        calls.append(
            Array(
                #"{"method":"io.smartstack.Shell.ConfigureStack","parameters":{"stack":"load","family":"systemMedium","widgets":[\#(widgets)]}}"#
                    .utf8) + [0])
        return calls
    }

    /// `GetStack` of the load's stack.
    public static func getStack(to bytes: inout [UInt8]) {
        bytes += #"{"method":"io.smartstack.Shell.GetStack","parameters":{"stack":"load"}}"#.utf8
        bytes.append(0)
    }

    /// A donation with an id of its own (`runID-client-sequence`), from one of ten apps.
    public static func donate(runID: String, client: Int, sequence: Int, to bytes: inout [UInt8]) {
        bytes +=
            #"{"method":"io.smartstack.Provider.Donate","parameters":{"app":"org.load.app\#(client % 10)","intent":"open","id":"\#(runID)-\#(client)-\#(sequence)"}}"#
            .utf8
        bytes.append(0)
    }

    /// A timeline whose relevance changes with the call, so the stack's order (and its subscribers) keeps changing.
    public static func submitTimeline(client: Int, sequence: Int, to bytes: inout [UInt8]) {
        let score = Double((client * 7 + sequence) % 10) / 10
        bytes +=
            #"{"method":"io.smartstack.Provider.SubmitTimeline","parameters":{"app":"org.load.app\#(client % 10)","kind":"main","policy":{"kind":"never"},"entries":[{"date":"2020-01-01T00:00:00Z","relevance":{"score":\#(score),"duration":3600}}]}}"#
            .utf8
        bytes.append(0)
    }
}
