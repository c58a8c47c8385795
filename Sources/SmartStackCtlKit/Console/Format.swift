public import SmartStackCore

/// How numbers, durations and times read for people.
public enum Format {
    /// A number with at most `decimals` decimals, trailing zeros kept (`0.787`, `-1.330`).
    /// `text` safe to print on a terminal: control characters (C0, DEL, C1) as escapes (`\n`, `\t`, `\x1b`,
    /// `\u{9b}`) and a backslash doubled, so an id an app chose cannot move the cursor, clear the screen or
    /// forge a line. Text without them is returned as it is.
    public static func printable(_ text: String) -> String {
        func isControl(_ scalar: Unicode.Scalar) -> Bool {
            scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
        }
        guard text.unicodeScalars.contains(where: { isControl($0) }) else { return text }
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            case "\\": out += "\\\\"
            case _ where scalar.value < 0x80 && isControl(scalar):
                let hex = String(scalar.value, radix: 16)
                out += "\\x" + (hex.count == 1 ? "0" + hex : hex)
            case _ where isControl(scalar): out += "\\u{" + String(scalar.value, radix: 16) + "}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    public static func number(_ value: Double, decimals: Int = 3) -> String {
        guard value.isFinite else { return String(value) }
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let scaled = (abs(value) * scale).rounded()
        guard scaled < 9e15 else { return String(value) }
        let whole = Int64(scaled) / Int64(scale)
        let fraction = Int64(scaled) % Int64(scale)
        let sign = value < 0 && scaled > 0 ? "-" : ""
        guard decimals > 0 else { return sign + String(whole) }
        let digits = String(fraction)
        return sign + String(whole) + "." + String(repeating: "0", count: decimals - digits.count) + digits
    }

    /// A number with an explicit sign (`+1.33`, `-0.20`).
    public static func signed(_ value: Double, decimals: Int = 2) -> String {
        (value >= 0 ? "+" : "") + number(value, decimals: decimals)
    }

    /// A share as a percentage with one decimal (`45.0%`).
    public static func percent(_ share: Double) -> String {
        number(share * 100, decimals: 1) + "%"
    }

    /// An integer with thousands separated by commas (`21,088`).
    public static func count(_ value: Int) -> String {
        let digits = String(abs(value))
        var grouped = ""
        for (index, character) in digits.enumerated() {
            if index > 0, (digits.count - index) % 3 == 0 { grouped.append(",") }
            grouped.append(character)
        }
        return (value < 0 ? "-" : "") + grouped
    }

    /// A duration the way systemd prints them: `4min 12s`, `2h 5min`, `3d 4h`, `850ms`, `12µs`; none is `0s`.
    public static func duration(_ seconds: Double) -> String {
        guard seconds.isFinite else { return "∞" }
        let value = abs(seconds)
        guard value >= 0.000_000_5 else { return "0s" }
        let sign = seconds < 0 ? "-" : ""
        if value < 0.001 { return sign + String(Int((value * 1_000_000).rounded())) + "µs" }
        if value < 1 { return sign + String(Int((value * 1_000).rounded())) + "ms" }
        if value < 60 { return sign + number(value, decimals: value < 10 ? 1 : 0) + "s" }
        let total = Int64(value.rounded())
        let amounts: [(amount: Int64, name: String)] = [
            (total / 86_400, "d"), (total % 86_400 / 3_600, "h"), (total % 3_600 / 60, "min"), (total % 60, "s"),
        ]
        // The two most significant units from the first that is not zero: 1h 1min, 3d 4h, 5min.
        let first = amounts.firstIndex { $0.amount > 0 } ?? amounts.count - 1
        let parts = amounts[first..<min(first + 2, amounts.count)].filter { $0.amount > 0 }.map {
            "\($0.amount)\($0.name)"
        }
        return sign + parts.joined(separator: " ")
    }

    /// `in 5min`, `12s ago`, `now` for `time` seen from `reference`.
    public static func relative(_ time: Timestamp, from reference: Timestamp) -> String {
        let delta = time.seconds(since: reference)
        if abs(delta) < 0.5 { return "now" }
        return delta > 0 ? "in " + duration(delta) : duration(-delta) + " ago"
    }

    /// A time on one clock per screen, `reference`'s (the reply's date, printed on its own offset): `09:45:12` when on
    /// `reference`'s local day, `2026-11-21 09:45` on another; without a reference, on its own offset,
    /// `2026-11-21 09:45:12`. (With a reference each time was on its own offset too: a provider's +05:00 entry read
    /// "since 02:45:55" under a header "explained at 21:45:55", the two clocks 5 hours apart and neither named.)
    public static func time(_ time: Timestamp, reference: Timestamp? = nil) -> String {
        let time = reference.map { time.withOffset($0.utcOffsetSeconds) } ?? time
        let text = time.rfc3339
        // rfc3339 is YYYY-MM-DDTHH:MM:SS(.fff)(Z|±hh:mm) on the timestamp's own offset.
        let date = String(text.prefix(10))
        let clock = String(text.dropFirst(11).prefix(8))
        guard let reference else { return date + " " + clock }
        if reference.withOffset(time.utcOffsetSeconds).localDay == time.localDay { return clock }
        return date + " " + clock.prefix(5)
    }

    /// A time with its relative form: `09:45:12 (in 5min)`.
    public static func timeAndRelative(_ value: Timestamp, reference: Timestamp) -> String {
        "\(time(value, reference: reference)) (\(relative(value, from: reference)))"
    }

    /// A horizontal bar of `fraction` (0–1) of `width` cells, with eighth blocks.
    public static func bar(_ fraction: Double, width: Int) -> String {
        guard fraction.isFinite, fraction > 0, width > 0 else { return "" }
        let eighths = Int((min(1, fraction) * Double(width * 8)).rounded())
        let blocks = ["", "▏", "▎", "▍", "▌", "▋", "▊", "▉"]
        return String(repeating: "█", count: eighths / 8) + blocks[eighths % 8]
    }
}
