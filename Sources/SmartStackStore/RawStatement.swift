import GRDB
import GRDBSQLite

/// A prepared statement for the hot paths, bound and stepped directly on the connection GRDB opened (no
/// argument arrays or `Data` per row). Used only inside the GRDB closure that owns the connection.
final class RawStatement {
    private let handle: OpaquePointer
    private let connection: OpaquePointer

    init(_ db: Database, sql: String) throws {
        guard let connection = db.sqliteConnection else { throw DatabaseError(resultCode: .SQLITE_MISUSE) }
        var statement: OpaquePointer?
        let code = sqlite3_prepare_v3(connection, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard code == SQLITE_OK, let statement else {
            throw DatabaseError(
                resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(connection)))
        }
        self.handle = statement
        self.connection = connection
    }

    deinit { sqlite3_finalize(handle) }

    func bind(_ index: Int32, _ value: Int64) { sqlite3_bind_int64(handle, index, value) }

    func bindNull(_ index: Int32) { sqlite3_bind_null(handle, index) }

    /// Binds text that must stay valid until `step` or `run` returns (the caller's buffer).
    func bind(_ index: Int32, text: UnsafeBufferPointer<UInt8>) {
        sqlite3_bind_text(
            handle, index, UnsafeRawPointer(text.baseAddress)?.assumingMemoryBound(to: CChar.self), Int32(text.count),
            nil)
    }

    /// Binds a copy of `text` (SQLite keeps its own), for statements run once.
    func bind(_ index: Int32, copying text: String) {
        let transient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)
        sqlite3_bind_text(handle, index, text, -1, transient)
    }

    /// The column's text (a copy).
    func text(_ column: Int32) -> String {
        guard let base = sqlite3_column_text(handle, column) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: base, count: count), as: UTF8.self)
    }

    /// Binds bytes that must stay valid until `step` or `run` returns (the caller's buffer).
    func bind(_ index: Int32, blob: UnsafeRawBufferPointer) {
        sqlite3_bind_blob(handle, index, blob.baseAddress, Int32(blob.count), nil)
    }

    /// Runs the statement to completion and resets it; returns the rows it changed.
    @discardableResult
    func run() throws -> Int {
        defer {
            sqlite3_reset(handle)
            sqlite3_clear_bindings(handle)
        }
        var code = sqlite3_step(handle)
        while code == SQLITE_ROW { code = sqlite3_step(handle) }
        guard code == SQLITE_DONE else { throw error(code) }
        return Int(sqlite3_changes(connection))
    }

    /// Steps to the next row; false at the end (then the statement is reset).
    func next() throws -> Bool {
        let code = sqlite3_step(handle)
        if code == SQLITE_ROW { return true }
        sqlite3_reset(handle)
        guard code == SQLITE_DONE else { throw error(code) }
        return false
    }

    func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }

    /// The column's bytes, valid until the next step.
    func blob(_ column: Int32) -> UnsafeRawBufferPointer {
        let count = Int(sqlite3_column_bytes(handle, column))
        guard let base = sqlite3_column_blob(handle, column) else {
            return UnsafeRawBufferPointer(start: nil, count: 0)
        }
        return UnsafeRawBufferPointer(start: base, count: count)
    }

    private func error(_ code: Int32) -> DatabaseError {
        DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(connection)))
    }
}
