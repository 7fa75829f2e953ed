<?xml version="1.0" encoding="UTF-8"?>
<!--
  The stylesheet XalanWorkload applies to its catalogue: grouping by key
  (Muenchian), sorting (text and number), sums and averages with
  format-number, string functions, a recursive named template, modes,
  xsl:number, attribute value templates, copy-of and variables.
-->
<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
  <xsl:output method="xml" indent="yes" encoding="UTF-8"/>
  <xsl:key name="by-category" match="book" use="@category"/>
  <xsl:key name="by-author" match="book" use="author"/>
  <xsl:param name="currency" select="'EUR'"/>

  <xsl:template match="/catalogue">
    <report books="{count(book)}" currency="{$currency}">
      <xsl:apply-templates select="book[generate-id() = generate-id(key('by-category', @category)[1])]" mode="group">
        <xsl:sort select="@category"/>
      </xsl:apply-templates>
      <authors>
        <xsl:for-each select="book[generate-id() = generate-id(key('by-author', author)[1])]">
          <xsl:sort select="count(key('by-author', author))" data-type="number" order="descending"/>
          <xsl:sort select="author"/>
          <xsl:if test="position() &lt;= 10">
            <author name="{author}" books="{count(key('by-author', author))}"
                    initials="{concat(substring(author, 1, 1), substring(substring-after(author, ' '), 1, 1))}"/>
          </xsl:if>
        </xsl:for-each>
      </authors>
      <cheapest><xsl:apply-templates select="book" mode="cheap"><xsl:sort select="price" data-type="number"/></xsl:apply-templates></cheapest>
      <summary total="{format-number(sum(book/price), '#,##0.00')}"
               average="{format-number(sum(book/price) div count(book), '0.000')}"
               old="{count(book[year &lt; 1990])}" recent="{count(book[year &gt;= 2010])}">
        <xsl:call-template name="stars"><xsl:with-param name="n" select="count(book) mod 17"/></xsl:call-template>
      </summary>
    </report>
  </xsl:template>

  <xsl:template match="book" mode="group">
    <xsl:variable name="members" select="key('by-category', @category)"/>
    <category name="{translate(@category, 'abcdefghijklmnopqrstuvwxyz', 'ABCDEFGHIJKLMNOPQRSTUVWXYZ')}"
              count="{count($members)}" sum="{format-number(sum($members/price), '0.00')}">
      <xsl:for-each select="$members">
        <xsl:sort select="price" data-type="number" order="descending"/>
        <xsl:sort select="title"/>
        <xsl:if test="position() &lt;= 5">
          <xsl:apply-templates select=".">
            <xsl:with-param name="rank" select="position()"/>
          </xsl:apply-templates>
        </xsl:if>
      </xsl:for-each>
    </category>
  </xsl:template>

  <xsl:template match="book">
    <xsl:param name="rank" select="0"/>
    <entry>
      <xsl:attribute name="rank"><xsl:number value="$rank" format="i"/></xsl:attribute>
      <xsl:attribute name="era">
        <xsl:choose>
          <xsl:when test="year &lt; 1990">classic</xsl:when>
          <xsl:when test="year &lt; 2010">modern</xsl:when>
          <xsl:otherwise>recent</xsl:otherwise>
        </xsl:choose>
      </xsl:attribute>
      <xsl:value-of select="normalize-space(concat(title, ' by ', author, ' (', year, ')'))"/>
      <xsl:text> </xsl:text>
      <xsl:value-of select="format-number(price, '0.00')"/>
      <xsl:if test="contains(title, 'the')"><the/></xsl:if>
      <xsl:copy-of select="tags"/>
    </entry>
  </xsl:template>

  <xsl:template match="book" mode="cheap">
    <xsl:if test="position() &lt;= 3">
      <xsl:number value="position()" format="1. "/>
      <xsl:value-of select="substring-before(concat(title, ' '), ' ')"/>
      <xsl:text>;</xsl:text>
    </xsl:if>
  </xsl:template>

  <xsl:template name="stars">
    <xsl:param name="n"/>
    <xsl:if test="$n &gt; 0">
      <xsl:text>*</xsl:text>
      <xsl:call-template name="stars"><xsl:with-param name="n" select="$n - 1"/></xsl:call-template>
    </xsl:if>
  </xsl:template>
</xsl:stylesheet>
