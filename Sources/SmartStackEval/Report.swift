/// Renders an `EvaluationResult` for people (an aligned table) and for programs (one JSON object).
public enum Report {
    /// The header line and one row per ranker, in the order the rankers ran:
    ///
    ///     moments 3980  counted 3310  coverage 0.832
    ///     ranker    hit@1  hit@3    MRR  top-changes/100
    ///     mru       0.523  0.854  0.700           42.598
    public static func table(_ result: EvaluationResult) -> String {
        var lines = [
            "moments \(result.moments)  counted \(result.counted)  coverage \(fixed(result.coverage, decimals: 3))"
        ]
        let columns = ["hit@1", "hit@3", "MRR", "top-changes/100"]
        var rows = [["ranker"] + columns]
        for (name, score) in result.rankers {
            rows.append(
                [name] + [score.hit1, score.hit3, score.mrr, score.topChanges].map { fixed($0, decimals: 3) })
        }
        let widths = (0..<rows[0].count).map { column in rows.map { $0[column].count }.max() ?? 0 }
        for row in rows {
            var line = pad(row[0], to: widths[0], left: true)
            for column in 1..<row.count { line += "  " + pad(row[column], to: widths[column], left: false) }
            lines.append(line)
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Exactly one JSON object, keys of `rankers` in ranker order, numbers as plain decimals:
    /// `{"moments": N, "counted": N, "coverage": x, "rankers": {"NAME": {"hit1": x, "hit3": x, "mrr": x,
    /// "topChanges": x}, ...}}`.
    public static func json(_ result: EvaluationResult) -> String {
        let rankers = result.rankers.map { name, score in
            "\(jsonString(name)): {\"hit1\": \(fixed(score.hit1, decimals: 6)), "
                + "\"hit3\": \(fixed(score.hit3, decimals: 6)), \"mrr\": \(fixed(score.mrr, decimals: 6)), "
                + "\"topChanges\": \(fixed(score.topChanges, decimals: 6))}"
        }
        return "{\"moments\": \(result.moments), \"counted\": \(result.counted), "
            + "\"coverage\": \(fixed(result.coverage, decimals: 6)), "
            + "\"rankers\": {\(rankers.joined(separator: ", "))}}\n"
    }

    /// `value` rounded to `decimals` places, written without an exponent (`0.523`, `42.598`, `-1.000`).
    static func fixed(_ value: Double, decimals: Int) -> String {
        guard value.isFinite else { return value.isNaN ? "nan" : (value < 0 ? "-inf" : "inf") }
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let scaled = (abs(value) * scale).rounded()
        guard scaled < 9e18 else { return String(value) }
        let units = UInt64(scaled)
        let divisor = UInt64(scale)
        var text = String(units / divisor)
        if decimals > 0 {
            let fraction = String(units % divisor)
            text += "." + String(repeating: "0", count: decimals - fraction.count) + fraction
        }
        return value < 0 && units > 0 ? "-" + text : text
    }

    private static func pad(_ text: String, to width: Int, left: Bool) -> String {
        let padding = String(repeating: " ", count: max(0, width - text.count))
        return left ? text + padding : padding + text
    }

    private static func jsonString(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
