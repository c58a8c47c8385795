/// A context a provider declares relevant for an instance or configuration (DESIGN "Context").
///
/// Providers declare a list in priority order; the first active one is the one that counts.
public enum RelevantContext: Hashable, Sendable {
    /// Relevant from `start` (inclusive) to `end` (exclusive).
    case dateInterval(start: Timestamp, end: Timestamp)
    /// Relevant while the context `key` has exactly `value` (`location=home`).
    case context(key: String, value: String)

    /// The most contexts one declaration may list.
    public static let defaultMaxCount = 32
    /// The longest context key, in UTF-8 bytes.
    public static let maxKeyBytes = 255
    /// The longest context value, in UTF-8 bytes.
    public static let maxValueBytes = 4_096

    /// Whether this context holds at `t` given the current context values.
    public func isActive(at t: Timestamp, contexts: [String: String]) -> Bool {
        switch self {
        case .dateInterval(let start, let end): start <= t && t < end
        case .context(let key, let value): contexts[key] == value
        }
    }

    /// The first time after `t` at which ``isActive(at:contexts:)`` can change by time alone: the interval's start
    /// or end. A context key/value changes only when the context does, so it has none.
    public func nextChange(after t: Timestamp) -> Timestamp? {
        guard case .dateInterval(let start, let end) = self else { return nil }
        if start > t { return start }
        return end > t ? end : nil
    }

    /// Checks this context; errors name fields under `parameter` (`contexts[1].end`).
    public func validate(parameter: String) throws(CoreError) {
        switch self {
        case .dateInterval(let start, let end):
            guard end > start else {
                throw .invalidParameter(parameter: "\(parameter).end", reason: "must be later than start (\(start))")
            }
        case .context(let key, let value):
            let keyBytes = key.utf8.count
            guard keyBytes > 0 else {
                throw .invalidParameter(parameter: "\(parameter).key", reason: "must not be empty")
            }
            guard keyBytes <= Self.maxKeyBytes else {
                throw .invalidParameter(
                    parameter: "\(parameter).key", reason: "is \(keyBytes) bytes; at most \(Self.maxKeyBytes) allowed")
            }
            let valueBytes = value.utf8.count
            guard valueBytes <= Self.maxValueBytes else {
                throw .invalidParameter(
                    parameter: "\(parameter).value",
                    reason: "is \(valueBytes) bytes; at most \(Self.maxValueBytes) allowed")
            }
        }
    }

    /// Checks a declared list, naming entries as `parameter[i]`; returns it unchanged.
    @discardableResult
    public static func validated(
        _ list: [RelevantContext], parameter: String = "contexts", maxCount: Int? = defaultMaxCount
    ) throws(CoreError) -> [RelevantContext] {
        if let maxCount, list.count > maxCount { throw .limitExceeded(limit: "maxRelevantContexts", maximum: maxCount) }
        for (index, context) in list.enumerated() {
            try context.validate(parameter: "\(parameter)[\(index)]")
        }
        return list
    }

    /// The index of the first active context in `list` (priority order), or `nil` when none is active.
    public static func firstActive(_ list: [RelevantContext], at t: Timestamp, contexts: [String: String]) -> Int? {
        list.firstIndex { $0.isActive(at: t, contexts: contexts) }
    }

    /// The first time after `t` at which any interval in `list` starts or ends.
    public static func nextChange(_ list: [RelevantContext], after t: Timestamp) -> Timestamp? {
        list.compactMap { $0.nextChange(after: t) }.min()
    }
}
