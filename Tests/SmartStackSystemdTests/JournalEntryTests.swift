import SmartStackSystemd
import Testing

@Suite struct JournalFieldNameTests {
    @Test(arguments: ["SMARTSTACK_STACK", "A", "X1_2", "CODE_FILE_EXTRA", String(repeating: "A", count: 64)])
    func validNames(_ name: String) {
        #expect(JournalFieldName(name)?.rawValue == name)
        #expect(JournalFieldName.problem(with: name) == nil)
    }

    @Test(arguments: [
        ("", "empty"),
        ("_PID", "starts with an underscore (reserved for journald)"),
        ("1ST", "starts with a digit"),
        ("smartstack_stack", "has characters other than A-Z, 0-9 and _"),
        ("SMARTSTACK-STACK", "has characters other than A-Z, 0-9 and _"),
        ("SMARTSTACK STACK", "has characters other than A-Z, 0-9 and _"),
        ("ÄPFEL", "has characters other than A-Z, 0-9 and _"),
        (String(repeating: "A", count: 65), "longer than 64 bytes"),
        ("MESSAGE", "is set by the journal writer itself"),
        ("MESSAGE_ID", "is set by the journal writer itself"),
        ("PRIORITY", "is set by the journal writer itself"),
        ("SYSLOG_IDENTIFIER", "is set by the journal writer itself"),
        ("CODE_LINE", "is set by the journal writer itself"),
    ])
    func invalidNames(_ name: String, _ problem: String) {
        #expect(JournalFieldName(name) == nil)
        #expect(JournalFieldName.problem(with: name) == problem)
    }

    @Test func smartstackPrefix() {
        #expect(JournalFieldName.smartstack("CLIENT_UID") == .clientUID)
        #expect(JournalFieldName.smartstack("bad") == nil)
    }

    @Test(arguments: [
        JournalFieldName.stack, .revision, .order, .previousOrder, .top, .reason, .scores, .widget, .kind, .app,
        .count, .clientUID, .clientPID, .method, .error, .truncated,
    ])
    func constantsAreValidSmartStackNames(_ name: JournalFieldName) {
        #expect(JournalFieldName(name.rawValue) == name)
        #expect(name.rawValue.hasPrefix("SMARTSTACK_"))
    }
}

@Suite struct JournalEntryTests {
    /// What is left for the value of `SMARTSTACK_SCORES=` under the field limit.
    private let cap = JournalEntry.maximumFieldBytes - "SMARTSTACK_SCORES=".utf8.count

    @Test func fieldsInOrderWithIdentifierAndCodeLocation() {
        var entry = JournalEntry(
            .orderChanged, "Order of home changed", fields: [.stack: "home", .order: "weather,calendar"])
        entry.append(.revision, 42)
        let fields = entry.journalFields(
            identifier: "smartstackd", file: "Server/Stack.swift", line: 7, function: "f()")
        #expect(
            fields.map(\.name) == [
                "MESSAGE", "PRIORITY", "MESSAGE_ID", "SYSLOG_IDENTIFIER", "CODE_FILE", "CODE_LINE", "CODE_FUNC",
                "SMARTSTACK_STACK", "SMARTSTACK_ORDER", "SMARTSTACK_REVISION",
            ])
        #expect(
            fields.map(\.value) == [
                "Order of home changed", "6", "040d2f906681431293c211e0a6ef5c64", "smartstackd", "Server/Stack.swift",
                "7",
                "f()", "home", "weather,calendar", "42",
            ])
        #expect(entry.value(of: .revision) == "42")
        #expect(entry.value(of: .top) == nil)
    }

    @Test func noMessageIDWithoutAnEvent() {
        let fields = JournalEntry("plain", priority: .debug).journalFields(identifier: "x")
        #expect(fields.map(\.name) == ["MESSAGE", "PRIORITY", "SYSLOG_IDENTIFIER"])
        #expect(fields[1].value == "7")
    }

    @Test(arguments: [0, 1, 4076, 4077])
    func valuesUpToTheCapAreKept(_ length: Int) {
        let value = String(repeating: "a", count: length)
        #expect(JournalEntry.capped(value, forField: "SMARTSTACK_SCORES") == (value, false))
        #expect(JournalEntry.capped(value + "b", forField: "SMARTSTACK_SCORES").truncated == (length == 4077))
    }

    /// Cut values stay under 4096 bytes, end with the marker, and are valid UTF-8 cut at a scalar
    /// boundary whatever the width of the characters around the cut.
    @Test(arguments: ["a", "é", "€", "🙂", "a€🙂é"])
    func longValuesAreCutAtAScalarBoundary(_ unit: String) {
        for repeats in [cap / unit.utf8.count + 1, 5000, 20000] {
            let value = String(repeating: unit, count: repeats)
            guard value.utf8.count > cap else { continue }
            let (capped, truncated) = JournalEntry.capped(value, forField: "SMARTSTACK_SCORES")
            #expect(truncated)
            #expect(capped.utf8.count <= cap)
            #expect(capped.utf8.count > cap - 4 - JournalEntry.truncationMarker.utf8.count)
            #expect(capped.hasSuffix(JournalEntry.truncationMarker))
            #expect(value.hasPrefix(String(capped.dropLast(JournalEntry.truncationMarker.count))))
        }
    }

    @Test func truncatedFieldsAreNamed() {
        let long = String(repeating: "x", count: 10_000)
        var entry = JournalEntry(long, fields: [.stack: "home", .scores: long])
        entry.append(.reason, long)
        let fields = entry.journalFields(identifier: "smartstackd")
        #expect(fields.allSatisfy { $0.name.utf8.count + 1 + $0.value.utf8.count < 4096 })
        #expect(fields.last?.name == "SMARTSTACK_TRUNCATED")
        #expect(fields.last?.value == "MESSAGE,SMARTSTACK_SCORES,SMARTSTACK_REASON")
    }
}

@Suite struct MessageIDTests {
    @Test func eachEventHasItsOwnCanonicalID() {
        let ids = SmartStackEvent.allCases.map(\.messageID)
        #expect(Set(ids).count == SmartStackEvent.allCases.count)
        for event in SmartStackEvent.allCases {
            #expect(MessageID(event.messageID.hex) == event.messageID, "\(event)")
            #expect(event.messageID.hex.count == 32)
            #expect(event.messageID.hex == event.messageID.hex.lowercased())
            #expect(SmartStackEvent(messageID: event.messageID) == event)
        }
    }

    @Test func parsing() {
        let id = MessageID("040d2f906681431293c211e0a6ef5c64")
        #expect(MessageID("040D2F90-6681-4312-93C2-11E0A6EF5C64") == id)
        #expect(MessageID("040d2f906681431293c211e0a6ef5c6") == nil)
        #expect(MessageID("040d2f906681431293c211e0a6ef5c644") == nil)
        #expect(MessageID("040d2f906681431293c211e0a6ef5c6g") == nil)
        #expect(MessageID("") == nil)
        #expect(id.map { SmartStackEvent(messageID: $0) } == .orderChanged)
        #expect(MessageID(String(repeating: "0", count: 32)).flatMap { SmartStackEvent(messageID: $0) } == nil)
    }
}
