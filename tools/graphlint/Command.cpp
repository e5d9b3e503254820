#include "Command.h"

#include <llvm/ADT/StringExtras.h>

#include <algorithm>

#include <fmt/format.h>

namespace graphlint::cli {

std::vector<Command *> &commands() {
  static std::vector<Command *> all;
  return all;
}

Command *findCommand(llvm::StringRef name) {
  for (Command *c : commands())
    if (name == c->name())
      return c;
  return nullptr;
}

Command::Command(const char *name, const char *usage, const char *summary, const char *section)
    : name_(name), usage_(usage), summary_(summary), section_(section), sub_(name, summary) {
  commands().push_back(this);
}

void Command::alias(cl::Option &of, const char *letter, bool prefix) {
  for (OptionEntry &e : options_)
    if (e.option == &of)
      e.shortName = letter;
  std::unique_ptr<cl::alias> a = prefix ? std::make_unique<cl::alias>(llvm::StringRef(letter), cl::aliasopt(of), cl::Prefix)
                                        : std::make_unique<cl::alias>(llvm::StringRef(letter), cl::aliasopt(of));
  letters_.push_back({letter, &of});
  owned_.push_back(std::move(a));
}

cl::list<std::string> &Command::positional(const char *what) {
  auto p = std::make_unique<cl::list<std::string>>(cl::Positional, cl::desc(what), cl::sub(sub_));
  cl::list<std::string> &ref = *p;
  owned_.push_back(std::move(p));
  return ref;
}

const OptionEntry *Command::find(llvm::StringRef name, bool letter) const {
  for (const OptionEntry &e : options_)
    if (letter ? e.shortName == name : e.option->ArgStr == name)
      return &e;
  return nullptr;
}

std::string Command::takes() const {
  std::vector<std::string> own;
  bool shared = false;
  for (const OptionEntry &e : options_) {
    if (e.shared) {
      shared = true;
      continue;
    }
    own.push_back(options_.size() == 1 && !e.valueHelp.empty() ? "--" + e.option->ArgStr.str() + " " + e.valueHelp
                                                               : "--" + e.option->ArgStr.str());
  }
  if (own.empty() && !shared)
    return "it takes no options";
  std::string list = llvm::join(own, ", ");
  if (shared)
    list += (list.empty() ? "" : " and ") + std::string("the configuration and training-setup options");
  return "it takes " + list;
}

std::string flagsOf(const OptionEntry &e) {
  std::string f = e.shortName.empty() ? "" : "-" + e.shortName + ", ";
  f += "--" + e.option->ArgStr.str();
  if (!e.valueHelp.empty())
    f += " " + e.valueHelp;
  return f;
}

void printOption(llvm::raw_ostream &os, const std::string &flags, const std::string &help) {
  llvm::SmallVector<llvm::StringRef, 8> lines;
  llvm::StringRef(help).split(lines, '\n');
  std::string head = "  " + flags;
  if (head.size() < 27) {
    os << fmt::format("{:<27}{}\n", head, lines.empty() ? "" : lines[0].str());
  } else {
    os << head << "\n";
    if (!lines.empty())
      os << std::string(27, ' ') << lines[0] << "\n";
  }
  for (size_t i = 1; i < lines.size(); ++i)
    os << std::string(27, ' ') << lines[i] << "\n";
}

void Command::printHelp(llvm::raw_ostream &os, bool topLevel) const {
  if (!topLevel)
    os << fmt::format("graphlint {} - {}\n\nUSAGE\n  graphlint {} {}\n", name_, summary_, name_, usage_);
  // Sections in first-use order; shared ones only once at top level (lint's).
  std::vector<const char *> sections;
  for (const OptionEntry &e : options_) {
    const char *s = e.section ? e.section : section_;
    if (std::find(sections.begin(), sections.end(), s) == sections.end())
      sections.push_back(s);
  }
  bool sharedElsewhere = false;
  for (const char *s : sections) {
    bool any = false;
    for (const OptionEntry &e : options_) {
      if ((e.section ? e.section : section_) != s)
        continue;
      if (topLevel && e.shared && llvm::StringRef(name_) != "lint") {
        sharedElsewhere = true;
        continue;
      }
      if (!any)
        os << "\n" << s << "\n";
      any = true;
      printOption(os, flagsOf(e), e.help);
    }
  }
  if (sharedElsewhere)
    os << "  and the configuration and training-setup options above, as for lint\n";
}

std::vector<std::string> &commandArguments() {
  static std::vector<std::string> args;
  return args;
}

int usage(const std::string &msg) {
  llvm::errs() << "graphlint: " << msg << "\n"
               << "Try 'graphlint --help'.\n";
  return 2;
}

int fail(const std::string &msg) {
  llvm::errs() << "graphlint: " << msg << "\n";
  return 2;
}

namespace {

// An option the user named but this command does not own: is it another
// command's? Then say which options this one takes.
// The command's long option nearest to a misspelt one (--precison ->
// --precision): at most 2 edits, and fewer than a third of the name's letters,
// so that a short unrelated flag is not offered. Empty when none is near.
std::string nearestOption(const Command &c, llvm::StringRef name) {
  std::string best;
  unsigned bestDistance = 3;
  for (const OptionEntry &e : c.options()) {
    llvm::StringRef candidate = e.option->ArgStr;
    if (candidate.size() < 2)
      continue;
    unsigned d = name.edit_distance(candidate, true, bestDistance);
    if (d < bestDistance && d * 3 < std::max(name.size(), candidate.size())) {
      bestDistance = d;
      best = candidate.str();
    }
  }
  return best;
}

std::string notOurs(const Command &c, const std::string &shown, llvm::StringRef name, bool letter) {
  for (Command *other : commands())
    if (other != &c && other->find(name, letter))
      return fmt::format("{} is not an option of 'graphlint {}' ({})", shown, c.name(), c.takes());
  if (!letter)
    if (std::string near = nearestOption(c, name); !near.empty())
      return fmt::format("unknown option '{}'; did you mean '--{}'?", shown, near);
  return fmt::format("unknown option '{}'", shown);
}

}  // namespace

std::string checkArguments(const Command &c, const std::vector<std::string> &args) {
  for (size_t i = 0; i < args.size(); ++i) {
    llvm::StringRef a = args[i];
    if (a == "--")
      break;
    if (!a.startswith("-") || a == "-")
      continue;  // a file
    const OptionEntry *e = nullptr;
    bool inlineValue = false;
    std::string shown;
    if (a.startswith("--")) {
      auto [name, value] = a.drop_front(2).split('=');
      inlineValue = a.contains('=');
      shown = "--" + name.str();
      e = c.find(name, false);
      if (!e)
        return notOurs(c, shown, name, false);
    } else {
      llvm::StringRef letter = a.substr(1, 1);
      e = c.find(letter, true);
      shown = a.str();
      // A glued value only for the prefix aliases (-Dbatch=8, -j4).
      bool prefix = e && e->option->getValueExpectedFlag() == cl::ValueRequired &&
                    (letter == "D" || letter == "j");
      if (!e || (a.size() > 2 && !prefix))
        return e ? fmt::format("unknown option '{}'", shown) : notOurs(c, shown, letter, true);
      inlineValue = a.size() > 2;
    }
    if (e->option->getValueExpectedFlag() == cl::ValueRequired && !inlineValue) {
      if (i + 1 >= args.size())
        return shown + " needs a value";
      ++i;  // the value, whatever it looks like
    }
  }
  return {};
}

}  // namespace graphlint::cli
