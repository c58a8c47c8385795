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
        lines += aligned(rows)
        if let line = marginLine(result, of: marginRanker) { lines.append(line) }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The ranker whose lead over the others the reports print.
    public static let marginRanker = "engine"

    /// `engine over the best baseline: hit@1 +0.053 (mru), MRR +0.030 (mru); top changes 0.85× mru`; `nil`
    /// without that ranker or others. The top changes' ratio is left out without an `mru` ranker that changes.
    public static func marginLine(_ result: EvaluationResult, of name: String) -> String? {
        guard let margin = result.margin(of: name) else { return nil }
        var line =
            "\(name) over the best baseline: hit@1 \(signed(margin.hit1)) (\(margin.bestHit1)), "
            + "MRR \(signed(margin.mrr)) (\(margin.bestMRR))"
        if let own = result.score(of: name), let mru = result.score(of: "mru"), mru.topChanges > 0 {
            line += "; top changes \(fixed(own.topChanges / mru.topChanges, decimals: 2))× mru"
        }
        return line
    }

    /// One row per user (hit@1 / MRR of every ranker, then the margin of `engine` over the best of the others
    /// on each), then the row of everyone:
    ///
    ///     person  counted  engine         mru            …  margin
    ///     sur-A       990  0.425 / 0.631  0.320 / 0.565  …  +0.105 / +0.066
    public static func perUser(_ result: EvaluationResult) -> String {
        let names = result.rankers.map(\.name)
        let hasMargin = result.margin(of: marginRanker) != nil
        var rows = [["person", "counted"] + names + (hasMargin ? ["margin"] : [])]
        func row(_ name: String, _ part: EvaluationResult) -> [String] {
            var cells = [name, String(part.counted)]
            for (_, score) in part.rankers {
                cells.append("\(fixed(score.hit1, decimals: 3)) / \(fixed(score.mrr, decimals: 3))")
            }
            if hasMargin {
                cells.append(
                    part.margin(of: marginRanker).map { "\(signed($0.hit1)) / \(signed($0.mrr))" } ?? "-")
            }
            return cells
        }
        for (name, user) in result.users { rows.append(row(name, user)) }
        rows.append(row("all", result))
        return aligned(rows).joined(separator: "\n") + "\n"
    }

    /// Rows as lines of columns two spaces apart: the first column left-aligned, the others right-aligned.
    private static func aligned(_ rows: [[String]]) -> [String] {
        guard let header = rows.first else { return [] }
        let widths = (0..<header.count).map { column in rows.map { $0[column].count }.max() ?? 0 }
        return rows.map { row in
            var line = pad(row[0], to: widths[0], left: true)
            for column in 1..<row.count { line += "  " + pad(row[column], to: widths[column], left: false) }
            return line
        }
    }

    /// `+0.053`, `-0.004`, `+0.000`.
    static func signed(_ value: Double) -> String {
        let text = fixed(value, decimals: 3)
        return text.hasPrefix("-") ? text : "+" + text
    }

    /// Exactly one JSON object, keys of `rankers` in ranker order, numbers as plain decimals:
    /// `{"moments": N, "counted": N, "coverage": x, "rankers": {"NAME": {"hit1": x, "hit3": x, "mrr": x,
    /// "topChanges": x}, ...}}`.
    ///
    /// With an `engine` ranker and others, `"margin": {"hit1": x, "mrr": x, "bestHit1": NAME, "bestMRR": NAME}`
    /// follows `rankers`; with `perUser`, `"users": {"NAME": {same keys, without "users"}, ...}` follows that.
    public static func json(_ result: EvaluationResult, perUser: Bool = false) -> String {
        var text = object(result)
        if perUser {
            let users = result.users.map { name, user in "\(jsonString(name)): \(object(user))}" }
            text += ", \"users\": {\(users.joined(separator: ", "))}"
        }
        return text + "}\n"
    }

    /// The keys of one result's object, without its closing brace.
    private static func object(_ result: EvaluationResult) -> String {
        let rankers = result.rankers.map { name, score in
            "\(jsonString(name)): {\"hit1\": \(fixed(score.hit1, decimals: 6)), "
                + "\"hit3\": \(fixed(score.hit3, decimals: 6)), \"mrr\": \(fixed(score.mrr, decimals: 6)), "
                + "\"topChanges\": \(fixed(score.topChanges, decimals: 6))}"
        }
        var text =
            "{\"moments\": \(result.moments), \"counted\": \(result.counted), "
            + "\"coverage\": \(fixed(result.coverage, decimals: 6)), "
            + "\"rankers\": {\(rankers.joined(separator: ", "))}"
        if let margin = result.margin(of: marginRanker) {
            text +=
                ", \"margin\": {\"hit1\": \(fixed(margin.hit1, decimals: 6)), "
                + "\"mrr\": \(fixed(margin.mrr, decimals: 6)), \"bestHit1\": \(jsonString(margin.bestHit1)), "
                + "\"bestMRR\": \(jsonString(margin.bestMRR))}"
        }
        return text
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
