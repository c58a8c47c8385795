// The parts of libsystemd that smartstackd and smartstack-desktop use: sd-daemon (notify, watchdog,
// listen fds), sd-journal (the native journal protocol) and sd-bus (D-Bus, for smartstack-desktop).
//
// No helpers are needed: the functions used are not variadic. The variadic
// sd_journal_send(), sd_notifyf(), sd_bus_call_method() and sd_bus_message_read() are deliberately unused;
// Swift builds the iovec array for sd_journal_sendv(), the state string for sd_notify(), and D-Bus
// messages one argument at a time (sd_bus_message_append_basic, sd_bus_message_read_basic).
// SD_LISTEN_FDS_START is a plain integer macro, which Swift imports; SD_BUS_ERROR_NULL is a zeroed
// sd_bus_error, which Swift's sd_bus_error() is.
#include <systemd/sd-daemon.h>
#include <systemd/sd-journal.h>
#include <systemd/sd-bus.h>
#include <sys/uio.h>
