int counter() {
  static thread_local int n = 0;
  return ++n;
}
