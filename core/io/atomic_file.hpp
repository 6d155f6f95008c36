#pragma once
// Whole-file writes that never leave a half-written file: the bytes go to a temporary file in
// the target's directory, are flushed to disk, and the temporary is renamed over the target
// (rename is atomic within one file system). On any failure the temporary is removed and the
// previous content of the target, if any, is untouched.
#include <cstddef>
#include <filesystem>
#include <span>
#include <string_view>

namespace asteria::io {

// Writes the concatenation of `pieces` to `file`. Throws InputError naming the file when the
// directory is missing or not writable, any write, flush or rename fails, or `file` exists and
// is not a regular file (a device, a directory, a pipe: never replaced). A symbolic link to a
// regular file (or to nothing yet) is written through: the file it names is replaced.
void write_file_atomically(const std::filesystem::path& file, std::span<const std::span<const std::byte>> pieces);

// "a regular file", "a character device", ...: for messages about what was found at a path.
std::string_view file_type_text(std::filesystem::file_type type) noexcept;

// Convenience for text.
void write_file_atomically(const std::filesystem::path& file, std::string_view text);

}  // namespace asteria::io
