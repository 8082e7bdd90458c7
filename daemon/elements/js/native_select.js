// The hidden <select> a widget mirrors, or null (select_mirror.prelude.js).
(start) => nativeSelect(start)
