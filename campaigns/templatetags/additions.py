"""``{% panel template values %}``: a section another app adds to a forum
page (``campaigns.extensions``), rendered with the page's context plus its
own values."""

from django import template

register = template.Library()


@register.simple_tag(takes_context=True)
def panel(context, template_name: str, values: dict):
    included = context.template.engine.get_template(template_name)
    with context.push(**values):
        return included.render(context)
