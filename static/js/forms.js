// Fields that apply only with one choice of another field: a wrapper marked
// data-shown-when="<select id>=<value>" shows only while that select has that
// value (the post form's "Nombre del PNJ" with the NPC voice, "Miembros
// elegidos" with those recipients). Without JavaScript every field shows and
// the server ignores what does not apply.
(function () {
  "use strict";

  function update() {
    for (const wrapper of document.querySelectorAll("[data-shown-when]")) {
      const rule = wrapper.dataset.shownWhen;
      const cut = rule.indexOf("=");
      const control = document.getElementById(rule.slice(0, cut));
      if (control) wrapper.hidden = control.value !== rule.slice(cut + 1);
    }
  }

  document.addEventListener("change", (event) => {
    if (event.target instanceof HTMLSelectElement) update();
  });
  // A form that comes back by htmx (after an error) brings its own fields.
  document.addEventListener("htmx:load", update);
  update();
})();
