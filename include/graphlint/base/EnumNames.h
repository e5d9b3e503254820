// One table per enum of names the user writes (config keys, flags, JSON): the
// first name of a row is the one printed, the others are accepted aliases.
// nameOf/fromName replace the hand-written switch + if-chain pairs, so a
// value and its spelling cannot drift apart.
#pragma once

#include <initializer_list>
#include <optional>
#include <string_view>

namespace graphlint {

template <typename E> struct EnumName {
  E value;
  std::string_view name;                          // printed
  std::initializer_list<std::string_view> aliases = {};  // also accepted
};

template <typename E, size_t N>
constexpr std::string_view nameOf(const EnumName<E> (&table)[N], E e) {
  for (const EnumName<E> &row : table)
    if (row.value == e)
      return row.name;
  return table[0].name;
}

template <typename E, size_t N>
std::optional<E> fromName(const EnumName<E> (&table)[N], std::string_view s) {
  for (const EnumName<E> &row : table) {
    if (row.name == s)
      return row.value;
    for (std::string_view a : row.aliases)
      if (a == s)
        return row.value;
  }
  return std::nullopt;
}

}  // namespace graphlint
