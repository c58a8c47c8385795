/// What the engine rejects, each case naming what was wrong.
///
/// The service maps these to Varlink errors: `invalidParameter` to
/// `org.varlink.service.InvalidParameter` (with `parameter`), the others to `io.smartstack.*` errors.
public enum CoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A parameter's value is malformed or out of range; `parameter` is its name as the caller wrote it
    /// (a dotted path such as `entries[3].relevance.score` or `configuration.city`).
    case invalidParameter(parameter: String, reason: String)
    /// No such object: `kind` is `stack`, `instance`, `widgetKind`, `app`, `liveActivity`, …
    case notFound(kind: String, id: String)
    /// The object exists and the call contradicts it (a duplicate id, a family mismatch, …).
    case conflict(kind: String, id: String, reason: String)
    /// A configured limit would be exceeded; `limit` names the setting.
    case limitExceeded(limit: String, maximum: Int)

    public var description: String {
        switch self {
        case .invalidParameter(let parameter, let reason): "invalid parameter '\(parameter)': \(reason)"
        case .notFound(let kind, let id): "no \(kind) '\(id)'"
        case .conflict(let kind, let id, let reason): "\(kind) '\(id)': \(reason)"
        case .limitExceeded(let limit, let maximum): "limit '\(limit)' of \(maximum) exceeded"
        }
    }

    /// The offending parameter, when there is one.
    public var parameter: String? {
        if case .invalidParameter(let parameter, _) = self { return parameter }
        return nil
    }
}
