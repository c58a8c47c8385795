/// A JSON object: members in insertion order, looked up by key.
///
/// Small objects (the usual Varlink parameters) are a plain array searched linearly, which beats hashing at
/// that size; past `indexThreshold` members a key → position index keeps lookups and the parser's duplicate
/// check constant-time, so a hostile object with many keys costs linear time, not quadratic.
/// Two objects are equal when they have the same members, in any order.
public struct JSONObject: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral {
    public typealias Element = (key: String, value: JSONValue)

    /// Members in insertion order; keys are unique.
    private var members: [Element]
    /// Key → position in `members`, kept only while there are more than `indexThreshold` members.
    private var index: [String: Int]?

    /// Objects larger than this keep a hash index.
    static let indexThreshold = 16

    public init() {
        members = []
    }

    /// An empty object with room for `minimumCapacity` members.
    public init(minimumCapacity: Int) {
        members = []
        members.reserveCapacity(minimumCapacity)
    }

    /// An object with these members; a repeated key keeps its last value at its first position.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.init(minimumCapacity: elements.count)
        for (key, value) in elements { self[key] = value }
    }

    /// The member named `key`; setting `nil` removes it, setting a new key appends it.
    public subscript(key: String) -> JSONValue? {
        get {
            guard let position = position(of: key) else { return nil }
            return members[position].value
        }
        set {
            if let newValue {
                if let position = position(of: key) {
                    members[position].value = newValue
                } else {
                    appendUnchecked(key, newValue)
                }
            } else {
                removeValue(forKey: key)
            }
        }
    }

    /// The keys in insertion order.
    public var keys: [String] { members.map(\.key) }

    /// The values in insertion order.
    public var values: [JSONValue] { members.map(\.value) }

    /// The number of members.
    public var count: Int { members.count }

    /// Whether the object has no members.
    public var isEmpty: Bool { members.isEmpty }

    /// Whether the object has a member named `key`.
    public func contains(key: String) -> Bool { position(of: key) != nil }

    /// Removes the member named `key`, returning its value.
    @discardableResult
    public mutating func removeValue(forKey key: String) -> JSONValue? {
        guard let position = position(of: key) else { return nil }
        let removed = members.remove(at: position).value
        rebuildIndex()
        return removed
    }

    /// Appends a member when `key` is new; returns false, changing nothing, when it is already present.
    @discardableResult
    public mutating func insertNew(_ key: String, _ value: JSONValue) -> Bool {
        guard position(of: key) == nil else { return false }
        appendUnchecked(key, value)
        return true
    }

    /// Appends a member whose key the caller knows is new (reply encoders with fixed keys): no lookup.
    /// Checked in debug builds only.
    mutating func appendNew(_ key: String, _ value: JSONValue) {
        assert(position(of: key) == nil, "duplicate key '\(key)'")
        appendUnchecked(key, value)
    }

    public func makeIterator() -> IndexingIterator<[Element]> { members.makeIterator() }

    public var underestimatedCount: Int { members.count }

    // MARK: Equality without regard to order

    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        guard lhs.members.count == rhs.members.count else { return false }
        for (offset, member) in lhs.members.enumerated() {
            // Same order is the common case: compare in place before looking up.
            if offset < rhs.members.count, rhs.members[offset].key == member.key {
                guard rhs.members[offset].value == member.value else { return false }
            } else {
                guard let other = rhs[member.key], other == member.value else { return false }
            }
        }
        return true
    }

    public func hash(into hasher: inout Hasher) {
        // Order-independent: the sum of the members' own hashes.
        var sum = 0
        for member in members {
            var memberHasher = Hasher()
            memberHasher.combine(member.key)
            memberHasher.combine(member.value)
            sum &+= memberHasher.finalize()
        }
        hasher.combine(members.count)
        hasher.combine(sum)
    }

    // MARK: Storage

    private func position(of key: String) -> Int? {
        if let index { return index[key] }
        return members.firstIndex { $0.key == key }
    }

    private mutating func appendUnchecked(_ key: String, _ value: JSONValue) {
        members.append((key, value))
        if index != nil {
            index?[key] = members.count - 1
        } else if members.count > Self.indexThreshold {
            rebuildIndex()
        }
    }

    private mutating func rebuildIndex() {
        guard members.count > Self.indexThreshold else {
            index = nil
            return
        }
        var built = [String: Int](minimumCapacity: members.count)
        for (position, member) in members.enumerated() { built[member.key] = position }
        index = built
    }
}

extension JSONObject: CustomStringConvertible {
    /// The object as compact JSON text.
    public var description: String { JSONValue.object(self).description }
}
