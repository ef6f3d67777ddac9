#include "export/trace_event_writer.hpp"

#include <cmath>

namespace fp8scope::cli {

void append_json_string(fmt::memory_buffer& out, std::string_view text)
{
    out.push_back('"');
    size_t plain_from = 0;
    for (size_t i = 0; i < text.size(); ++i) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (c >= 0x20 && c != '"' && c != '\\') [[likely]]
            continue;
        out.append(text.substr(plain_from, i - plain_from));
        if (c == '"' || c == '\\') {
            out.push_back('\\');
            out.push_back(static_cast<char>(c));
        } else {
            fmt::format_to(fmt::appender(out), "\\u{:04x}", c);
        }
        plain_from = i + 1;
    }
    out.append(text.substr(plain_from));
    out.push_back('"');
}

void append_microseconds(fmt::memory_buffer& out, int64_t ns)
{
    // Kineto's fmtTs: "{us}.{ns % 1000:03}". Written by hand for the sign of values between -1 and 0 us.
    if (ns < 0) {
        out.push_back('-');
        ns = -ns; // |ns| <= 2^54: the model keeps every time within +-kMaxTraceTimeNs
    }
    fmt::format_to(fmt::appender(out), "{}.{:03}", ns / 1000, ns % 1000);
}

void ChromeTraceEvents::open_event(std::string_view phase)
{
    out_.append(std::string_view(events_ == 0 ? "\n{\"ph\":\"" : ",\n{\"ph\":\""));
    out_.append(phase);
    out_.push_back('"');
    ++events_;
    first_arg_ = true;
}

void ChromeTraceEvents::key(std::string_view name)
{
    out_.append(std::string_view(",\""));
    out_.append(name);
    out_.append(std::string_view("\":"));
}

void ChromeTraceEvents::time(int64_t t_ns)
{
    append_microseconds(out_, t_ns - base_ns_);
}

void ChromeTraceEvents::begin_complete(
    std::string_view cat, std::string_view name, int64_t pid, int64_t tid, int64_t start_ns, int64_t end_ns)
{
    open_event("X");
    key("cat");
    append_json_string(out_, cat);
    key("name");
    append_json_string(out_, name);
    fmt::format_to(fmt::appender(out_), ",\"pid\":{},\"tid\":{},\"ts\":", pid, tid);
    time(start_ns);
    key("dur");
    append_microseconds(out_, end_ns - start_ns);
}

void ChromeTraceEvents::begin_instant(
    std::string_view cat, std::string_view name, int64_t pid, int64_t tid, int64_t at_ns)
{
    open_event("i");
    key("cat");
    append_json_string(out_, cat);
    key("name");
    append_json_string(out_, name);
    fmt::format_to(fmt::appender(out_), ",\"s\":\"t\",\"pid\":{},\"tid\":{},\"ts\":", pid, tid);
    time(at_ns);
}

bool ChromeTraceEvents::counter(std::string_view name, int64_t pid, int64_t at_ns, double value)
{
    if (!std::isfinite(value))
        return false;
    open_event("C");
    key("name");
    append_json_string(out_, name);
    fmt::format_to(fmt::appender(out_), ",\"pid\":{},\"tid\":0,\"ts\":", pid);
    time(at_ns);
    fmt::format_to(fmt::appender(out_), ",\"args\":{{\"value\":{}}}}}", value);
    file_.maybe_flush();
    return true;
}

void ChromeTraceEvents::flow(char phase, uint64_t id, int64_t pid, int64_t tid, int64_t at_ns)
{
    open_event(std::string_view(&phase, 1));
    fmt::format_to(fmt::appender(out_), ",\"id\":{},\"pid\":{},\"tid\":{},\"ts\":", id, pid, tid);
    time(at_ns);
    out_.append(std::string_view(
        phase == 'f' ? ",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"bp\":\"e\"}" : ",\"cat\":\"ac2g\",\"name\":\"ac2g\"}"));
    file_.maybe_flush();
}

void ChromeTraceEvents::metadata(
    std::string_view kind, int64_t pid, int64_t tid, std::string_view key_name, std::string_view value)
{
    open_event("M");
    key("name");
    append_json_string(out_, kind);
    fmt::format_to(fmt::appender(out_), ",\"pid\":{},\"tid\":{},\"ts\":0.000,\"args\":{{", pid, tid);
    append_json_string(out_, key_name);
    out_.push_back(':');
    append_json_string(out_, value);
    out_.append(std::string_view("}}"));
}

void ChromeTraceEvents::metadata(
    std::string_view kind, int64_t pid, int64_t tid, std::string_view key_name, int64_t value)
{
    open_event("M");
    key("name");
    append_json_string(out_, kind);
    fmt::format_to(fmt::appender(out_), ",\"pid\":{},\"tid\":{},\"ts\":0.000,\"args\":{{", pid, tid);
    append_json_string(out_, key_name);
    fmt::format_to(fmt::appender(out_), ":{}}}}}", value);
}

void ChromeTraceEvents::arg(std::string_view key_name, std::string_view value)
{
    out_.append(std::string_view(first_arg_ ? ",\"args\":{" : ","));
    first_arg_ = false;
    append_json_string(out_, key_name);
    out_.push_back(':');
    append_json_string(out_, value);
}

void ChromeTraceEvents::arg(std::string_view key_name, int64_t value)
{
    out_.append(std::string_view(first_arg_ ? ",\"args\":{" : ","));
    first_arg_ = false;
    append_json_string(out_, key_name);
    fmt::format_to(fmt::appender(out_), ":{}", value);
}

void ChromeTraceEvents::arg_number(std::string_view key_name, double value)
{
    out_.append(std::string_view(first_arg_ ? ",\"args\":{" : ","));
    first_arg_ = false;
    append_json_string(out_, key_name);
    if (std::isfinite(value))
        fmt::format_to(fmt::appender(out_), ":{}", value);
    else
        out_.append(std::string_view(":null"));
}

void ChromeTraceEvents::end()
{
    out_.append(std::string_view(first_arg_ ? "}" : "}}"));
    file_.maybe_flush();
}

} // namespace fp8scope::cli
