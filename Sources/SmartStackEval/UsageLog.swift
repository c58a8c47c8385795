public import SmartStackCore

/// One row of a usage log: an app brought to the front, or a look at the home screen.
public struct UsageEvent: Sendable, Hashable {
    /// What happened at `time`.
    public enum Kind: Sendable, Hashable {
        /// The user brought `app` to the front (a donation of intent `open` by `app`).
        case open(app: String)
        /// The user is on the home screen or just unlocked: the moment a stack is looked at.
        case home
    }

    /// When it happened; the offset is the user's local wall clock.
    public var time: Timestamp
    /// What happened.
    public var kind: Kind

    public init(time: Timestamp, kind: Kind) {
        self.time = time
        self.kind = kind
    }

    /// The app of an `open` row, `nil` for a `home` row.
    public var openedApp: String? {
        if case .open(let app) = kind { return app }
        return nil
    }
}

/// A parsed `smartstack-usage/1` log (docs/usage-log.md): every user's rows, in time order.
public struct UsageLog: Sendable {
    /// Users in order of first appearance in the file, each with its rows in file order.
    public var users: [(name: String, events: [UsageEvent])]

    public init(users: [(name: String, events: [UsageEvent])]) {
        self.users = users
    }

    /// The number of rows over all users.
    public var eventCount: Int { users.reduce(0) { $0 + $1.events.count } }

    /// Every row of the log in time order across people, as (person's index, row's index in their events); ties
    /// go to the person first in the file. How a replay interleaves the people of one log.
    public var chronological: [(user: Int, position: Int)] {
        var cursors = users.map { _ in 0 }
        var order: [(user: Int, position: Int)] = []
        order.reserveCapacity(eventCount)
        while true {
            var chosen = -1
            for (index, user) in users.enumerated() where cursors[index] < user.events.count {
                if chosen < 0 || user.events[cursors[index]].time < users[chosen].events[cursors[chosen]].time {
                    chosen = index
                }
            }
            guard chosen >= 0 else { return order }
            order.append((chosen, cursors[chosen]))
            cursors[chosen] += 1
        }
    }
}

/// A malformed usage log: the file, the 1-based line and what is wrong there.
public struct UsageLogError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file name as given to the parser.
    public var file: String
    /// The 1-based physical line number (comment and empty lines count).
    public var line: Int
    /// What is wrong with the line.
    public var problem: String

    public init(file: String, line: Int, problem: String) {
        self.file = file
        self.line = line
        self.problem = problem
    }

    public var description: String { "\(file):\(line): \(problem)" }
}

extension UsageLog {
    /// The header line every log starts with, after comments and empty lines.
    public static let header = "user\ttime\tapp\tevent"

    /// Parses a log held in a string; `file` only names it in errors.
    public static func parse(_ text: String, file: String) throws(UsageLogError) -> UsageLog {
        try parse(text.utf8, file: file)
    }

    /// Parses a log's UTF-8 bytes; `file` only names it in errors.
    ///
    /// The bytes are split by hand rather than through `String` APIs or regular expressions: replaying a
    /// real log starts with parsing it, and tens of thousands of lines should take milliseconds.
    public static func parse(_ bytes: some Collection<UInt8>, file: String) throws(UsageLogError) -> UsageLog {
        let contiguous = bytes.withContiguousStorageIfAvailable { buffer in
            Result { () throws(UsageLogError) in try parseBuffer(buffer, file: file) }
        }
        if let contiguous { return try contiguous.get() }
        return try Array(bytes).withUnsafeBufferPointer { buffer throws(UsageLogError) in
            try parseBuffer(buffer, file: file)
        }
    }

    private static let tab = UInt8(ascii: "\t")
    private static let newline = UInt8(ascii: "\n")
    private static let carriageReturn = UInt8(ascii: "\r")
    private static let hash = UInt8(ascii: "#")

    private static func parseBuffer(_ buffer: UnsafeBufferPointer<UInt8>, file: String) throws(UsageLogError)
        -> UsageLog
    {
        var users: [(name: String, events: [UsageEvent])] = []
        var userIndex: [String: Int] = [:]
        // The previous row's time and line of each user, to reject rows out of time order.
        var previous: [(time: Timestamp, line: Int)] = []
        var lastUser: (bytes: [UInt8], index: Int)?
        var sawHeader = false
        var lineNumber = 0
        var start = 0
        // A UTF-8 byte order mark is not part of the first line.
        if buffer.count >= 3, buffer[0] == 0xEF, buffer[1] == 0xBB, buffer[2] == 0xBF { start = 3 }

        while start < buffer.count {
            lineNumber += 1
            var end = start
            while end < buffer.count, buffer[end] != newline { end += 1 }
            let next = end + 1
            if end > start, buffer[end - 1] == carriageReturn { end -= 1 }
            defer { start = next }
            let line = UnsafeBufferPointer(rebasing: buffer[start..<end])
            if line.isEmpty || line[0] == hash { continue }

            func fail(_ problem: String) -> UsageLogError {
                UsageLogError(file: file, line: lineNumber, problem: problem)
            }

            if !sawHeader {
                guard line.elementsEqual(header.utf8) else {
                    throw fail("expected the header 'user<TAB>time<TAB>app<TAB>event', found '\(text(line))'")
                }
                sawHeader = true
                continue
            }

            // Split into exactly four fields at the TABs.
            var tabs = (0, 0, 0)
            var tabCount = 0
            for index in 0..<line.count where line[index] == tab {
                switch tabCount {
                case 0: tabs.0 = index
                case 1: tabs.1 = index
                case 2: tabs.2 = index
                default: break
                }
                tabCount += 1
            }
            guard tabCount == 3 else {
                throw fail("expected 4 TAB-separated fields (user, time, app, event), found \(tabCount + 1)")
            }
            let userBytes = UnsafeBufferPointer(rebasing: line[0..<tabs.0])
            let timeBytes = UnsafeBufferPointer(rebasing: line[(tabs.0 + 1)..<tabs.1])
            let appBytes = UnsafeBufferPointer(rebasing: line[(tabs.1 + 1)..<tabs.2])
            let eventBytes = UnsafeBufferPointer(rebasing: line[(tabs.2 + 1)...])
            func string(_ bytes: UnsafeBufferPointer<UInt8>, _ name: String) throws(UsageLogError) -> String {
                guard let value = String(validating: bytes, as: UTF8.self) else {
                    throw fail("the \(name) is not valid UTF-8")
                }
                return value
            }

            guard !userBytes.isEmpty else { throw fail("empty user") }
            let time: Timestamp
            do throws(TimestampParseError) {
                // Anything but ASCII fails to parse, so decoding cannot hide a bad byte here.
                time = try Timestamp(rfc3339: String(decoding: timeBytes, as: UTF8.self))
            } catch {
                throw fail(error.description)
            }
            let kind: UsageEvent.Kind
            if eventBytes.elementsEqual("open".utf8) {
                let app = try string(appBytes, "app")
                guard !app.isEmpty, app != "-" else { throw fail("an open row needs an app, found '\(app)'") }
                kind = .open(app: app)
            } else if eventBytes.elementsEqual("home".utf8) {
                guard appBytes.elementsEqual("-".utf8) else {
                    throw fail("a home row has app '-', found '\(text(appBytes))'")
                }
                kind = .home
            } else {
                throw fail("unknown event '\(text(eventBytes))' (expected 'open' or 'home')")
            }

            // Rows of one user usually come in runs: skip making and hashing the name for a repeat.
            let index: Int
            if let last = lastUser, userBytes.elementsEqual(last.bytes) {
                index = last.index
            } else {
                let user = try string(userBytes, "user")
                if let known = userIndex[user] {
                    index = known
                } else {
                    index = users.count
                    userIndex[user] = index
                    users.append((name: user, events: []))
                    previous.append((time: time, line: lineNumber))
                }
                lastUser = (bytes: Array(userBytes), index: index)
            }
            let last = previous[index]
            guard time >= last.time else {
                throw fail(
                    "time \(text(timeBytes)) is earlier than the previous row of user '\(users[index].name)' "
                        + "(line \(last.line)); a user's rows must be in time order")
            }
            previous[index] = (time: time, line: lineNumber)
            users[index].events.append(UsageEvent(time: time, kind: kind))
        }

        guard sawHeader else {
            throw UsageLogError(
                file: file, line: max(lineNumber, 1), problem: "no header line 'user<TAB>time<TAB>app<TAB>event'")
        }
        return UsageLog(users: users)
    }

    /// A line for an error message, invalid UTF-8 repaired and long lines cut.
    private static func text(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        let shown = String(decoding: bytes.prefix(80), as: UTF8.self)
        return bytes.count > 80 ? shown + "…" : shown
    }
}
